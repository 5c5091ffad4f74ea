"""Stop signals: Ctrl-C (SIGINT), SIGTERM and a closed terminal (SIGHUP) finish the current step, save a
checkpoint and stop; a second Ctrl-C stops at once."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """The signal received while training (``received``), and the handlers that note it."""

    def __init__(self, log: Callable[[str], Any]) -> None:
        self.log = log
        self.received: int | None = None

    def handle(self, signum: int, frame: Any) -> None:  # noqa: ANN401
        if self.received is not None:  # second Ctrl-C: stop at once
            raise KeyboardInterrupt
        self.received = signum
        self.log(
            f"{signal.Signals(signum).name} received: finishing this step and saving a checkpoint "
            "(Ctrl-C again to abort)"
        )

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The handlers in place while training (main thread only: elsewhere Python cannot set them)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self.handle) for s in STOP_SIGNALS}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

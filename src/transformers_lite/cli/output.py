"""Standard output while a command runs: a write that goes nowhere is an error, a reader that left is not.

``tlite generate RUN >&-`` (standard output closed) used to exit 0 having written nothing: Python sets
``sys.stdout`` to ``None`` and ``print`` to ``None`` is silently nothing. So ``main`` runs every command
inside ``guarded_stdout()``, which puts a ``CheckedOutput`` in place of ``sys.stdout``:

* a write or flush that fails (a closed stream, ``/dev/full``, an I/O error) is an ``OutputError``
  naming standard output; it is remembered, so a caller that swallows it (argparse's ``--help``
  does) still ends the command with ``tlite: error:`` and exit 1 when ``main`` checks at the end;
* a closed pipe (``tlite generate ... | head -c1``) is the reader's choice: ``BrokenPipeError`` passes
  through and ``main`` ends quietly with exit 0 (as ``head`` itself would see it; not 141, so a
  ``set -o pipefail`` script reading the first lines does not fail), after pointing descriptor 1 at
  ``/dev/null`` so Python's own last flush says nothing either.

A closed descriptor 1 is also held by ``/dev/null`` opened read-only, so no file the command opens
later (a run's weights) gets descriptor 1, and anything written to it there fails instead (``EBADF``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

CLOSED = "standard output is closed (the command was started with >&-); redirect it to a file or /dev/null"


class OutputError(OSError):
    """A write to standard output that went nowhere."""

    def __str__(self) -> str:
        return str(self.strerror)


class CheckedOutput:
    """``sys.stdout`` as seen by a command: writes and flushes of ``stream`` (``None``: closed) that fail
    raise ``OutputError`` (a closed pipe stays ``BrokenPipeError``); everything else is ``stream``'s."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.failed: OutputError | None = None

    def _fail(self, reason: str) -> OutputError:
        self.failed = self.failed or OutputError(errno.EBADF, reason)
        return self.failed

    def write(self, text: str) -> int:
        if self.stream is None:
            raise self._fail(CLOSED)
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as err:  # ValueError: "I/O operation on closed file"
            raise self._fail(f"cannot write to standard output: {getattr(err, 'strerror', None) or err}") from None

    def flush(self) -> None:
        if self.stream is None:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as err:
            raise self._fail(f"cannot write to standard output: {getattr(err, 'strerror', None) or err}") from None

    def finish(self) -> None:
        """Flush; the first write that failed during the command (even one a caller swallowed) is raised."""
        self.flush()
        if self.failed is not None:
            raise self.failed

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - isatty, fileno, encoding, ... of the stream
        if self.stream is None:
            raise AttributeError(name)
        return getattr(self.stream, name)


def _hold_closed_descriptor() -> None:
    """Put ``/dev/null``, read-only, on descriptor 1 when it is closed (see the module docstring)."""
    try:
        os.fstat(1)
    except OSError:
        fd = os.open(os.devnull, os.O_RDONLY)
        if fd != 1:
            os.dup2(fd, 1)
            os.close(fd)


def quiet_broken_pipe(output: CheckedOutput) -> None:
    """The reader went away: what is still buffered goes to ``/dev/null`` instead of an error at exit
    (only when ``output`` is this process's own standard output, not a stream put there in Python)."""
    if output.stream is None or output.stream is not sys.__stdout__:
        return
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[CheckedOutput]:
    """``sys.stdout`` is a ``CheckedOutput`` inside; the stream before it is put back after."""
    before = sys.stdout
    if before is None:
        _hold_closed_descriptor()
    checked = CheckedOutput(before)
    sys.stdout = checked
    try:
        yield checked
    finally:
        sys.stdout = before

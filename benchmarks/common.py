"""What every benchmark and experiment shares: the machine line each result carries, one JSON line per
result, the folder of real corpora ($TLITE_DATA_DIR, else ../shared/data beside the checkout), and a
step-rate cap that emulates a slower machine."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import torch

from transformers_lite.training.callbacks import Callback

MACHINE = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
DATA = Path(os.environ.get("TLITE_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def emit(**data: object) -> None:
    """One result as a JSON line, with the machine it was measured on."""
    print(json.dumps({**data, "machine": MACHINE}), flush=True)


class Throttle(Callback):
    """Sleep after each step so that training runs at most ``rate`` steps per second: a slower machine."""

    def __init__(self, rate: float) -> None:
        self.period, self.next = 1.0 / rate, None

    def on_step_end(self, trainer, state, loss) -> None:  # noqa: ANN001
        now = time.perf_counter()
        self.next = now + self.period if self.next is None else max(self.next + self.period, now)
        time.sleep(max(0.0, self.next - time.perf_counter()))

"""What every benchmark and experiment shares: the machine line each result carries, one JSON line per
result, and the folder of real corpora ($TLITE_DATA_DIR, else ../shared/data beside the checkout)."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import torch

MACHINE = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
DATA = Path(os.environ.get("TLITE_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def emit(**data: object) -> None:
    """One result as a JSON line, with the machine it was measured on."""
    print(json.dumps({**data, "machine": MACHINE}), flush=True)

"""What a run recorded while training: ``metrics.csv`` (every logged row) and ``history.json`` (every
evaluation), read back for curves and the inspector."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any


def read_metrics(run_dir: str | Path) -> list[dict[str, float | None]]:
    """The rows of ``RUN/metrics.csv`` with numbers parsed (empty cells become ``None``)."""
    path = Path(run_dir) / "metrics.csv"
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return [{k: (float(v) if v not in ("", None) else None) for k, v in row.items()} for row in csv.DictReader(fh)]


def read_history(run_dir: str | Path) -> list[dict[str, Any]]:
    """The evaluations of ``RUN/history.json`` (none when absent)."""
    path = Path(run_dir) / "history.json"
    return json.loads(path.read_text()) if path.is_file() else []

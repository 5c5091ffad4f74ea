"""Writing ``metrics.csv``: every training-loss row and every evaluation of a run, one CSV row each
(``runs.history`` reads it back).

Columns: ``step, epoch, wall_s, lr, train_loss`` and then every validation metric the task reports
(``val_loss``, ``val_perplexity``, ``val_accuracy``, ...), empty where a row has no value. Rewritten
atomically with each checkpoint from the checkpointed state, so it always matches ``history.json``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text

BASE = ("step", "epoch", "wall_s", "lr", "train_loss")


def metrics_rows(history: list[dict[str, Any]], log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Training-loss rows and evaluation rows in step order (an evaluation after a log row of its step)."""
    rows = [(r["step"], 0, r) for r in log] + [(r["step"], 1, r) for r in history]
    return [r for _, _, r in sorted(rows, key=lambda x: (x[0], x[1]))]


def write_metrics_csv(path: str | Path, history: list[dict[str, Any]], log: list[dict[str, Any]]) -> None:
    rows = metrics_rows(history, log)
    extra = sorted({k for r in rows for k in r} - set(BASE))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*BASE, *extra], lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in rows)
    atomic_write_text(path, out.getvalue())

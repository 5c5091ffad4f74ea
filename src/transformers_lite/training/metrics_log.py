"""Writing ``metrics.csv``: the training loss every ``log_every`` steps and every evaluation of a run,
one CSV row per step (``runs.history`` reads it back).

Columns: ``step, epoch, wall_s, lr, train_loss`` and then every validation metric the task reports
(``val_loss``, ``val_perplexity``, ``val_accuracy``, ...), empty where a row has no value. Rewritten
atomically from the training state, with ``history.json``, at each checkpoint and every few seconds
between them (``callbacks.Checkpointer``), so the two always match and a run is seen while it trains.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text

BASE = ("step", "epoch", "wall_s", "lr", "train_loss")


def metrics_rows(history: list[dict[str, Any]], log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per step that has a training-loss row or an evaluation, in step order.

    With training-loss rows (``log_every`` > 0), ``train_loss`` comes only from them: an evaluation's own
    training loss averages over every step since the previous evaluation, a longer window than a log
    row's, and the two at one step would draw a sawtooth. Without them, evaluations carry it."""
    rows: dict[int, dict[str, Any]] = {r["step"]: dict(r) for r in log}
    for record in history:
        metrics = {k: v for k, v in record.items() if not (log and k == "train_loss")}
        rows[record["step"]] = {**metrics, **rows.get(record["step"], {})}
    return [rows[step] for step in sorted(rows)]


def write_metrics_csv(path: str | Path, history: list[dict[str, Any]], log: list[dict[str, Any]]) -> None:
    rows = metrics_rows(history, log)
    extra = sorted({k for r in rows for k in r} - set(BASE))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*BASE, *extra], lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in rows)
    atomic_write_text(path, out.getvalue())

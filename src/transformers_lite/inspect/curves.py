"""Training curves of any run: training loss (every logged row) and each validation metric, against
the optimizer step; losses on one panel, the other metrics (accuracy, F1, perplexity, BLEU) on a second."""

from __future__ import annotations

from pathlib import Path

from ..runs.history import read_history, read_metrics
from . import plots


def curve_series(run_dir: Path) -> dict[str, tuple[list, list]]:
    """``name -> (steps, values)`` from ``metrics.csv`` (or ``history.json`` for runs without one)."""
    rows = read_metrics(run_dir) or read_history(run_dir)
    names = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in ("step", "epoch", "wall_s", "lr")]
    series: dict[str, tuple[list, list]] = {}
    for name in names:
        points = [(r["step"], value) for r in rows if (value := r.get(name)) is not None]
        if points:
            series[name] = ([p[0] for p in points], [p[1] for p in points])
    return series


def write_training_curves(run_dir: Path, out: Path | None = None) -> Path:
    """``training_curves.png`` in ``out`` (default: the run directory)."""
    series = curve_series(Path(run_dir))
    if not series:
        raise ValueError(f"{run_dir} has no metrics.csv or history.json rows to plot yet")
    losses = {k: v for k, v in series.items() if k.endswith("loss")}
    others = {k: v for k, v in series.items() if not k.endswith("loss")}
    return plots.curves(losses, Path(out or run_dir) / "training_curves.png", "training curves", second=others)

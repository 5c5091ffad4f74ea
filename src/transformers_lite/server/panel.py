"""The run panel: what the inspector shows of a run before any input — its settings (without this
machine's paths), parameter table, training curves, where a training still running stands, its
embedding map and its timeline with the replay read across it. ``live`` gives the same panel for a run
whose model is not loaded yet; ``views`` shows what a run does with an input.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ..budget import seconds
from ..config import Config
from ..evaluation.prediction import class_names
from ..inspect.curves import curve_series
from ..inspect.examples import example_inputs
from ..inspect.replay import replay
from ..inspect.scores import pca_2d, token_embeddings, tsne_2d
from ..pipeline import Run
from ..runs.complete import is_training
from ..runs.history import HistoryFileError, read_metrics
from ..runs.snapshots import read_timeline
from ..summary import summary_rows
from .views import LIMITS

PRIVATE = ("command", "machine", "imported_from")  # how and where a run was made: not shown to the page


def public_hyperparameters(hyper: dict[str, Any]) -> dict[str, Any]:
    """A run's recorded settings without the machine, the command line and absolute paths (a data file
    is shown by its name)."""
    out = {k: v for k, v in hyper.items() if k not in PRIVATE}
    data = out.get("data")
    if isinstance(data, dict):
        out["data"] = {k: Path(v).name if isinstance(v, str) and Path(v).is_absolute() else v for k, v in data.items()}
    return out


_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/[^\s'\",;)]+")


def public_text(text: str, root: Path) -> str:
    """A message without this machine's absolute paths: a path inside the served folder ``root`` relative
    to it, any other by its last part (as ``public_hyperparameters`` shows data files)."""
    bases = {str(root.absolute()).rstrip("/") + "/", str(root.resolve()).rstrip("/") + "/"}

    def shown(match: re.Match[str]) -> str:
        path = match.group(0)
        inside = next((path[len(b) :] for b in bases if path.startswith(b)), None)
        return inside if inside else Path(path).name

    return _ABSOLUTE_PATH.sub(shown, text)


def run_info(name: str, run: Run) -> dict[str, Any]:
    """Everything the run panel shows: parameter table, settings, config and training curves; ``ready``:
    its model is loaded (``live.waiting_info`` answers for a run that trains and has no checkpoint yet)."""
    rows = summary_rows(run.model)
    hyper = run.hyperparameters
    curves, notices = training_curves(run.run_dir)
    return {
        "name": name,
        "family": run.config.family,
        "actions": list(run.family.actions),
        "preset": hyper.get("preset"),
        "config": run.config.to_dict(),
        "hyperparameters": public_hyperparameters(hyper),
        "parameters": [{"layer": r[0], "kind": r[1], "trainable": r[2], "fixed": r[3]} for r in rows],
        "total_trainable": sum(r[2] for r in rows),
        "total_fixed": sum(r[3] for r in rows),
        "curves": curves,
        "training": training_state(run.run_dir, hyper),
        "example": _example(run),
        "task": run.family.task_title(run),
        "limits": LIMITS.__dict__,
        "notices": notices,
        "ready": True,
        "waiting": None,
    }


# run folder -> (the loaded run, its example): the run itself is kept, not its id, which a run loaded again
# after the folder changed (``registry``) could be given once the old one is freed
_EXAMPLES: dict[str, tuple[Run, dict[str, Any]]] = {}


def _example(run: Run) -> dict[str, Any]:
    """``example_inputs`` read once per loaded run (a live run's info is asked for every few seconds)."""
    key = str(run.run_dir)
    kept = _EXAMPLES.get(key)
    if kept is None or kept[0] is not run:
        kept = _EXAMPLES[key] = (run, example_inputs(run))
    return kept[1]


def training_state(run_dir: Path, hyper: dict[str, Any]) -> dict[str, Any] | None:
    """Where a run that is still training stands (a process holds its lock): the step and elapsed seconds
    of the last row of ``metrics.csv`` (written every few seconds while it trains; 0 before the first),
    its step limit and time budget from its recorded settings ``hyper``; ``None`` for a run that is not
    training."""
    if not is_training(run_dir):
        return None
    try:
        rows = read_metrics(run_dir)
    except HistoryFileError:
        rows = []
    last = rows[-1] if rows else {}
    train, budget = hyper.get("train"), hyper.get("budget")
    minutes = train.get("max_minutes") if isinstance(train, dict) else None
    allowed = budget.get("training_s") if isinstance(budget, dict) else None  # what training was allowed of it
    return {
        "step": last.get("step") or 0,
        "elapsed_s": last.get("wall_s") or 0.0,
        "total_steps": hyper.get("total_steps"),
        "budget_s": seconds(minutes) if allowed is None else allowed,
    }


def training_curves(run_dir: Path) -> tuple[dict[str, dict[str, list[float]]], list[str]]:
    """The run's curves as ``name -> {"step", "value"}``, and notices for the page. A damaged
    ``metrics.csv`` or ``history.json`` leaves the curves out with a notice saying why (the rest of the
    run panel still shows); points that are not finite numbers are left out (JSON has no NaN)."""
    try:
        series = curve_series(run_dir)
    except HistoryFileError as err:  # the reason only: the page never shows a path
        return {}, [f"training curves not shown: {err.path.name} {err.reason}"]
    curves, dropped = {}, 0
    for key, (steps, values) in series.items():
        kept = [(s, v) for s, v in zip(steps, values) if _finite(s) and _finite(v)]
        dropped += len(steps) - len(kept)
        if kept:
            curves[key] = {"step": [s for s, _ in kept], "value": [v for _, v in kept]}
    notices = [f"{dropped} recorded values that are not finite numbers are left out of the curves"] if dropped else []
    return curves, notices


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def embedding_view(run: Run, method: str) -> dict[str, Any]:
    """2-D map of the input token embeddings (PCA or t-SNE) with each point's token."""
    table = token_embeddings(run.model)[: LIMITS.embedding_points]  # (V', C)
    points = pca_2d(table) if method == "pca" else tsne_2d(table)  # (V', 2)
    tokenizer = run.src_tokenizer  # a translator's source side, the one tokenizer of the others
    labels = [tokenizer.shown(i) for i in range(table.shape[0])]
    notices = []
    if len(tokenizer) > table.shape[0]:
        notices.append(f"showing the first {table.shape[0]:,} of {len(tokenizer):,} tokens")
    return {"method": method, "points": points.tolist(), "labels": labels, "notices": notices}


# ---------------------------------------------------------------- generator
def timeline_view(run_dir: Path, cfg: Config) -> dict[str, Any]:
    """The snapshots ``inspect.timeline`` wrote while the run of model config ``cfg`` trained (so far, for
    one still training: they are written as they are taken), the loss a uniform guess scores (ln V, or
    ln K for a classifier), the classes, and the replay read across them (``inspect.replay``: when each
    position's loss fell, when each head found its pattern); a notice when the run has none."""
    snapshots = read_timeline(run_dir)
    n_labels = getattr(cfg, "n_labels", None)  # a classifier's classes (1: one logit for two), else tokens
    outputs = max(n_labels, 2) if n_labels else getattr(cfg, "vocab_size", getattr(cfg, "tgt_vocab_size", 0))
    notices = []
    if not snapshots and is_training(run_dir):
        notices = ["no training snapshot yet: the first (step 0) comes before its first step (none with --snapshots 0)"]
    elif not snapshots:
        notices = ["this run has no training snapshots (trained before the timeline existed, or with --snapshots 0)"]
    return {
        "snapshots": snapshots,
        "replay": replay(snapshots),
        "uniform_loss": math.log(outputs) if outputs else None,
        "classes": class_names(cfg) if n_labels else [],
        "notices": notices,
    }

"""A run that is training and cannot be loaded yet, as the run panel shows it: from what its folder holds
so far.

A training writes its settings (``hyperparameters.json``), ``config.json`` and tokenizers when it starts,
its record (``metrics.csv``, ``history.json``) every few seconds and its timeline's snapshots as they are
taken, but its weights only at its first checkpoint. Until then (and while a file it writes is between
two writes) its model cannot be loaded; the registry tells this apart from a damaged run by the lock the
training process holds (``runs.complete.is_training``), and the page is shown this: the run's settings,
its parameter table (counted on a model built without numbers, on PyTorch's ``meta`` device), its curves
and where training stands, with ``ready`` false and ``waiting`` saying why its model is not there. The
page asks again every few seconds and opens the views that need the model (the walk, generation, ...)
once ``ready`` is true.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..atomic import read_json
from ..errors import RunError
from ..models import build_model
from ..runs.loaded import read_config
from ..runs.manifest import HYPERPARAMETERS
from ..summary import summary_rows
from . import panel, views


def waiting_info(name: str, run_dir: Path, waiting: str, root: Path) -> dict[str, Any]:
    """The run panel of a run whose model is not loaded yet (``waiting``: why), with the keys of
    ``panel.run_info``; the model's own (``example``, ``task``) are ``None``. Messages name files relative
    to the served folder ``root``. A damaged ``config.json`` is the ``RunError`` that names it."""
    config = read_config(run_dir)
    notices: list[str] = []
    try:
        hyper = read_json(run_dir / HYPERPARAMETERS, "hyperparameters file")
    except (RunError, OSError) as err:
        hyper, notices = {}, [f"settings not shown: {err}"]
    if not isinstance(hyper, dict):
        hyper, notices = {}, [f"settings not shown: {HYPERPARAMETERS} is not a JSON object"]
    with torch.device("meta"):  # the shapes only: no memory, no random numbers drawn
        rows = summary_rows(build_model(config))
    curves, more = panel.training_curves(run_dir)
    return {
        "name": name,
        "family": config.family,
        "actions": [],  # none until the model is loaded
        "preset": hyper.get("preset"),
        "config": config.to_dict(),
        "hyperparameters": panel.public_hyperparameters(hyper),
        "parameters": [{"layer": r[0], "kind": r[1], "trainable": r[2], "fixed": r[3]} for r in rows],
        "total_trainable": sum(r[2] for r in rows),
        "total_fixed": sum(r[3] for r in rows),
        "curves": curves,
        "training": panel.training_state(run_dir, hyper),
        "example": None,
        "task": None,
        "limits": views.LIMITS.__dict__,
        "notices": [panel.public_text(text, root) for text in notices + more],
        "ready": False,
        "waiting": panel.public_text(waiting, root),
    }

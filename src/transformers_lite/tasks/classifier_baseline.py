"""A baseline beside a trained classifier (``tlite evaluate RUN --baseline``): fitted on the run's own
training records, read again exactly as training read them, and scored on the records the run is
evaluated on, so that the two figures answer the same question."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from ..data.sources import sha256
from ..errors import DataError
from ..evaluation.baselines import score_baseline
from ..evaluation.prediction import is_ordinal
from ..runs import LoadedRun
from .classifier import RECORD_SETTINGS, read_splits
from .classifier_settings import ClassifierSettings


def run_settings(run: LoadedRun) -> ClassifierSettings:
    """The data settings a classifier run recorded, its training file checked against its sha256; a run
    trained with ``--val`` trained on the whole ``--train`` table (no split of it held out)."""
    data = run.hyperparameters.get("data", {})
    train = data.get("train")
    if not train or not Path(train).exists():
        raise DataError(f"--baseline fits on the training records of {run.run_dir}, but its file {train} is gone")
    if Path(train).is_file() and data.get("train_sha256") not in (None, sha256(train)):
        raise DataError(
            f"--baseline fits on the training records of {run.run_dir}, but {train} changed since the run was "
            "trained (sha256 differs)"
        )
    recorded = {k: data[k] for k in RECORD_SETTINGS if k in data}
    recorded.setdefault("stratify", False)  # runs recorded before stratified splits drew a random one
    settings = ClassifierSettings(**recorded)
    return dataclasses.replace(settings, val=None, val_fraction=0.0) if settings.val else settings


def run_baseline(run: LoadedRun, name: str, texts: list[str], labels: np.ndarray) -> dict[str, Any]:
    """Baseline ``name`` (``evaluation.baselines``) fitted on the run's training records and scored on
    ``texts`` with their class indices ``labels`` (the run's classes)."""
    splits = read_splits(run_settings(run), run.hyperparameters.get("seed", 0))
    config, data = run.config, run.hyperparameters.get("data", {})
    if splits.classes[1] != tuple(config.label_names):
        raise DataError(f"the training records of {run.run_dir} now give other classes than the run's")
    ordinal = is_ordinal(config.label_names, config.n_labels, data.get("ordinal"))
    train = (splits.train.texts, splits.train.labels)
    return score_baseline(name, train, (texts, labels), max(config.n_labels, 2), ordinal=ordinal)

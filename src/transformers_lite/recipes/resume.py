"""Resuming a run: its recorded recipe, and the check that a command asking to continue it does not
silently change it (only its limits, reporting cadence and device may change)."""

from __future__ import annotations

import dataclasses
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..atomic import read_json
from ..config import Config, apply_overrides
from ..data.sources import sha256
from ..errors import ConfigError, RunError
from ..families import expect
from ..runs.complete import require
from ..runs.files import FORMAT
from ..settings import LIMITS
from .recipe import Recipe

# what a resumed run may change: how long it trains, how often it reports, where it runs
RESUME_MAY_CHANGE = {
    *LIMITS,
    "stop_at",
    "eval_every",
    "eval_train",
    "eval_at_start",
    "checkpoint_every",
    "patience",
    "keep_best",  # the best weights are kept in every checkpoint either way
    "device",
    "compile",
    "log_every",
    "logger",
}


def recorded_recipe(run_dir: str | Path) -> Recipe:
    """The recipe a run directory was trained with, from its ``hyperparameters.json``."""
    run_dir = Path(run_dir)
    path = run_dir / "hyperparameters.json"
    require(run_dir, "resume")  # the recorded settings, and the files a checkpoint was trained with
    hyper = read_json(path, "hyperparameters file")
    if hyper.get("imported_from"):
        raise RunError(
            f"{run_dir} was imported from {hyper['imported_from']}, not trained here: there is no training to resume"
        )
    if hyper.get("format", 0) < FORMAT:
        raise RunError(
            f"{run_dir} was written by transformers-lite 0.1; it still loads for evaluate/generate/"
            "classify/translate, but cannot be resumed: start a new run"
        )
    if not isinstance(hyper, dict) or not isinstance(hyper.get("train"), dict):
        raise RunError(f"{path}: damaged hyperparameters file (no train section); restore it from a copy of the run")
    train = {**hyper["train"], "stop_at": None}  # a paused run continues to its end unless paused again
    try:  # checked as training checks them (``settings.from_record``), the file named
        return Recipe.from_dict({**hyper, "train": train}, path, strict=False)
    except ConfigError as err:
        text = str(err) if str(err).startswith(str(path)) else f"{path}: {err}"
        raise RunError(f"{text}; restore the file from a copy of the run") from None


def resume_recipe(
    run_dir: str | Path,
    family: str | None = None,
    *,
    model: Config | None = None,
    model_overrides: list[str] | None = None,
    **settings: Any,
) -> Recipe:
    """The recorded recipe with the allowed ``settings`` changes (limits, reporting, device).

    ``model`` (default: the recorded one) with ``model_overrides``, and every other setting, must
    equal the recorded ones (the original command with ``--resume`` added is fine); a difference is a
    ``RunError`` naming it.
    """
    recorded = recorded_recipe(run_dir)
    if family is not None:
        expect(f"--resume {run_dir}: that run", recorded.family, family)
    differences = []
    if model is not None or model_overrides:
        model = apply_overrides(model or recorded.model, model_overrides or [])
        for f in fields(model):
            mine, theirs = getattr(model, f.name), getattr(recorded.model, f.name)
            if f.name not in model.data_fields and mine != theirs:
                differences.append(f"{f.name} (run {theirs!r}, command {mine!r})")
    current = {**recorded.train.to_dict(), **dataclasses.asdict(recorded.data)}
    digests = read_json(Path(run_dir) / "hyperparameters.json", "hyperparameters file").get("data", {})
    paths = {f.name for f in fields(recorded.data) if f.metadata.get("path")}
    moved = {}
    for key, value in settings.items():
        if key in RESUME_MAY_CHANGE or key not in current:
            continue
        if key in paths and value and current[key]:
            if Path(value).resolve() == Path(current[key]).resolve():
                continue
            if Path(value).exists() and digests.get(f"{key}_sha256") == sha256(value):
                moved[key] = value  # the same contents at another place: the run goes on with it
                continue
        elif value == current[key]:
            continue
        differences.append(f"{key} (run {current[key]!r}, command {value!r})")
    for key in paths - set(settings):  # given on the command line: compared above
        if current.get(key) and not Path(current[key]).exists():
            raise RunError(
                f"--resume {run_dir}: its {key.replace('_', ' ')} file {current[key]} is gone; give the file (or "
                f"a copy with the same contents) with --{key.replace('_', '-')}"
            )
    if differences:
        raise RunError(
            f"--resume {run_dir} continues the recorded run, but the command changes "
            f"{'; '.join(differences)}; drop those options, or start a new run with --out"
        )
    return recorded.override(**{k: v for k, v in settings.items() if k in RESUME_MAY_CHANGE}, **moved)

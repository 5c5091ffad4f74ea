"""An ``Experiment`` is one training run's full description: model config, trainer settings and data
settings. ``tlite train`` builds one from a preset's recipe and the command line; from Python::

    import transformers_lite as tl
    result = tl.Experiment.from_preset("generator", "seed-gpt", text="input.txt", max_minutes=4).run()

``to_dict`` is what ``--print-config`` prints and ``--run-config`` reads back. ``resume_experiment``
rebuilds a run's experiment from its ``hyperparameters.json`` and checks that a command asking to
continue it does not silently change it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from .config import Config, apply_overrides, config_from_dict, get_preset
from .errors import ConfigError, RunError
from .models import build_model
from .recipes import DEFAULT_PRESET, SEED_PRESET, Settings, get_recipe, training_model
from .tasks import get_task
from .training.callbacks import Callback
from .training.checkpoint import FORMAT, latest_checkpoint
from .training.distributed import SINGLE, DistContext, broadcast
from .training.rundir import RunLock, discard_if_empty, new_run_dir
from .training.runs import load_tokenizers, read_json
from .training.settings import LIMITS, TrainConfig
from .training.trainer import Trainer, TrainState

TRAIN_FIELDS = {f.name for f in fields(TrainConfig)}
# what a resumed run may change: how long it trains, how often it reports, where it runs
RESUME_MAY_CHANGE = {
    *LIMITS,
    "stop_at",
    "eval_every",
    "eval_train",
    "eval_at_start",
    "checkpoint_every",
    "patience",
    "device",
    "compile",
    "log_every",
    "logger",
}
# model fields the data decides (vocabulary sizes, labels, pad id): never compared on resume
DATA_DERIVED = {"vocab_size", "n_labels", "pad_id", "src_vocab_size", "tgt_vocab_size", "share_embeddings"}


@dataclass
class TrainResult:
    run_dir: Path
    state: TrainState
    interrupted_by: int | None = None  # the signal that stopped the run early (SIGINT, SIGTERM)


@dataclass(frozen=True)
class Experiment:
    task: str
    model: Config
    train: TrainConfig
    data: Settings
    preset: str | None = None
    recipe: str | None = None  # when not the preset's own: another preset's name, or "seed"

    @classmethod
    def from_preset(
        cls,
        task: str,
        preset: str | None = None,
        *,
        recipe: str | None = None,
        model: Config | None = None,
        model_overrides: list[str] | dict[str, Any] | None = None,
        **settings: Any,
    ) -> Experiment:
        """The preset's model and recipe (default: the task's default preset), then ``model_overrides``
        (``["n_blocks=6"]``) and ``settings`` (any ``TrainConfig`` or data field) on top. With ``model``
        (a config of your own) the recipe of the task's default preset is used. ``recipe`` takes the
        training defaults from another preset, or ``"seed"``: the posts' own setup (with the seed's
        model when no preset is named)."""
        get_task(task)
        if recipe == "seed" and preset is None and model is None:
            preset = SEED_PRESET.get(task)
        name = preset or (None if model is not None else DEFAULT_PRESET[task])
        chosen = get_recipe(recipe or name or DEFAULT_PRESET[task], task)
        if model is not None:
            config = model
        elif recipe:  # the preset's model as published, with the chosen recipe's model fields
            config = get_preset(name).replace(**chosen.model)
        else:
            config = training_model(name)
        for what, family in (("preset/config", config.family), ("recipe", chosen.task)):
            if family != task:
                raise ConfigError(f"the {what} is for a {family}, not a {task}")
        config = apply_overrides(config, model_overrides or [])
        return cls(task, config, chosen.train, chosen.data, name, recipe).with_settings(**settings)

    def with_settings(self, **settings: Any) -> Experiment:
        """A copy with trainer or data settings changed by name. Giving any limit (``epochs``,
        ``max_steps``, ``max_minutes``) replaces all of the recipe's limits."""
        data_fields = {f.name for f in fields(self.data)}
        unknown = sorted(set(settings) - TRAIN_FIELDS - data_fields)
        if unknown:
            raise ConfigError(
                f"unknown {self.task} setting(s): {', '.join(unknown)}; valid: "
                f"{', '.join(sorted(TRAIN_FIELDS | data_fields))}"
            )
        train = {k: v for k, v in settings.items() if k in TRAIN_FIELDS}
        if any(k in LIMITS for k in train):
            train = {**{k: None for k in LIMITS}, **train}
        data = {k: v for k, v in settings.items() if k in data_fields}
        return dataclasses.replace(
            self, train=dataclasses.replace(self.train, **train), data=dataclasses.replace(self.data, **data)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "preset": self.preset,
            "recipe": self.recipe,
            "model": self.model.to_dict(),
            "train": self.train.to_dict(),
            "data": dataclasses.asdict(self.data),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], origin: object = "run config") -> Experiment:
        """Rebuild from ``to_dict`` output (``--run-config``); unknown or missing sections are errors."""
        try:
            task = data["task"]
            settings_cls = get_task(task).Settings
            model = config_from_dict(data["model"])
            train = TrainConfig(**data["train"])
            known = {f.name for f in fields(settings_cls)}
            settings = settings_cls(**{k: v for k, v in data["data"].items() if k in known})
        except KeyError as err:
            raise ConfigError(f"{origin}: missing section {err}") from None
        except TypeError as err:
            raise ConfigError(f"{origin}: {err}") from None
        return cls(task, model, train, settings, data.get("preset"), data.get("recipe"))

    def run(
        self,
        out: str | Path | None = None,
        *,
        callbacks: list[Callback] = (),
        log: Callable = print,
        dist_ctx: DistContext = SINGLE,
        resume_dir: str | Path | None = None,
    ) -> TrainResult:
        """Train (a new run in ``out``, default ``outputs/YYYYmmdd_HHMM``; or continue ``resume_dir``).

        The run directory is locked for the whole training (``RunLock``). A run to resume that was
        stopped before its first checkpoint starts again from step 0 with its recorded settings.
        """
        created = not resume_dir and (out is None or not Path(out).exists())
        if resume_dir:
            run_dir = Path(resume_dir)
        else:
            run_dir = broadcast(new_run_dir(out) if dist_ctx.is_main else None, dist_ctx)  # rank 0 names the run
        try:
            with RunLock(run_dir) if dist_ctx.is_main else contextlib.nullcontext():
                resuming = broadcast(resume_dir is not None and latest_checkpoint(run_dir) is not None, dist_ctx)
                if resume_dir and not resuming:
                    log(f"{run_dir} has no checkpoint yet: training its recorded settings from step 0")
                tokenizers = load_tokenizers(run_dir, self.task) if resuming else None
                task = get_task(self.task)(self.data, self.model, self.train.seed, tokenizers)
                if resume_dir:
                    check_data_unchanged(run_dir, task.describe())
                config = task.adapt_config(self.model)
                torch.manual_seed(self.train.seed)  # weight initialisation (a resumed run loads its weights instead)
                model = build_model(config)
                trainer = Trainer(
                    model,
                    task,
                    self.train,
                    run_dir,
                    config,
                    resume=resuming,
                    extra={"preset": self.preset, "recipe": self.recipe},
                    callbacks=list(callbacks),
                    log=log,
                    dist_ctx=dist_ctx,
                )
                state = trainer.fit()
        except BaseException:
            if created and dist_ctx.is_main:
                discard_if_empty(run_dir)  # nothing written yet: leave no empty folder behind
            raise
        return TrainResult(run_dir, state, trainer.interrupted_by)


def recorded_experiment(run_dir: str | Path) -> Experiment:
    """The experiment a run directory was trained with, from its ``hyperparameters.json``."""
    run_dir = Path(run_dir)
    path = run_dir / "hyperparameters.json"
    if not path.is_file():
        raise RunError(f"--resume {run_dir}: not a run directory (no hyperparameters.json)")
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
    train = {**hyper["train"], "stop_at": None}  # a paused run continues to its end unless paused again
    return Experiment.from_dict({**hyper, "train": train}, path)


def resume_experiment(
    run_dir: str | Path,
    task: str | None = None,
    *,
    model: Config | None = None,
    model_overrides: list[str] | None = None,
    **settings: Any,
) -> Experiment:
    """The recorded experiment with the allowed ``settings`` changes (limits, reporting, device).

    ``model`` (default: the recorded one) with ``model_overrides``, and every other setting, must
    equal the recorded ones (the original command with ``--resume`` added is fine); a difference is a
    ``RunError`` naming it.
    """
    recorded = recorded_experiment(run_dir)
    if task is not None and task != recorded.task:
        raise RunError(f"--resume {run_dir}: that run trained a {recorded.task}, not a {task}")
    differences = []
    if model is not None or model_overrides:
        model = apply_overrides(model or recorded.model, model_overrides or [])
        for f in fields(model):
            mine, theirs = getattr(model, f.name), getattr(recorded.model, f.name)
            if f.name not in DATA_DERIVED and mine != theirs:
                differences.append(f"{f.name} (run {theirs!r}, command {mine!r})")
    current = {**recorded.train.to_dict(), **dataclasses.asdict(recorded.data)}
    paths = {f.name for f in fields(recorded.data) if f.metadata.get("path")}
    for key, value in settings.items():
        if key in RESUME_MAY_CHANGE or key not in current:
            continue
        same = (
            (Path(value).resolve() == Path(current[key]).resolve())
            if key in paths and value and current[key]
            else value == current[key]
        )
        if not same:
            differences.append(f"{key} (run {current[key]!r}, command {value!r})")
    if differences:
        raise RunError(
            f"--resume {run_dir} continues the recorded run, but the command changes "
            f"{'; '.join(differences)}; drop those options, or start a new run with --out"
        )
    return recorded.with_settings(**{k: v for k, v in settings.items() if k in RESUME_MAY_CHANGE})


def check_data_unchanged(run_dir: Path, now: dict[str, Any]) -> None:
    """Refuse to resume when a data file differs from the one the run started with (sha256)."""
    recorded = read_json(run_dir / "hyperparameters.json", "hyperparameters file").get("data", {})
    for key, digest in recorded.items():
        if key.endswith("_sha256") and now.get(key) not in (None, digest):
            name = key.removesuffix("_sha256")
            raise RunError(
                f"{now.get(name)} changed since {run_dir} started (sha256 differs); restore the original "
                "file, or start a new run"
            )


def print_config(experiment: Experiment) -> str:
    """``--print-config``: every setting as JSON (``--run-config`` reads it back). The model fields that
    training takes from the data (vocabulary size, number of labels, padding id) still hold the preset's
    values here, since the data is not read; ``set_from_data`` names them so that nobody takes those
    values for the ones the run will use."""
    printed = experiment.to_dict()
    derived = sorted(name for name in printed["model"] if name in DATA_DERIVED)
    printed["set_from_data"] = {
        "fields": derived,
        "note": "these model fields are replaced by values from the data (tokenizer, labels) when training starts",
    }
    return json.dumps(printed, indent=2)

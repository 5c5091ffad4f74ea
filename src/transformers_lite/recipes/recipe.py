"""A ``Recipe`` is everything one training run needs, in one frozen record: the model config *as
trained*, the trainer's settings (``TrainConfig``) and the data settings (the family's task
``Settings``). Presets are named recipes (``presets``); ``tlite train`` starts from one, and
``--print-config`` prints the recipe it will train, ``--config`` reads such a file back, and a run's
``hyperparameters.json`` records it, so ``--resume`` reads the same record. From Python::

    import transformers_lite as tl
    result = tl.get_preset("post-gpt").override(text="input.txt", max_minutes=4).run()

``run`` writes the run directory (hyperparameters, config, tokenizers first; checkpoints, metrics and
weights through the trainer's ``Checkpointer``) and lets the trainer train. With ``max_minutes`` the
minutes are the wall time of all of it (``budget.Budget``, begun by the caller where its command began,
else when ``run`` is called), and the run keeps how they were spent (``budget.json``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from ..atomic import atomic_write_json
from ..budget import Budget
from ..config import Config, apply_overrides, config_from_dict
from ..errors import ConfigError, warn
from ..families import family
from ..inspect.timeline import Timeline
from ..models import build_model
from ..runs import latest_checkpoint, load_tokenizers
from ..runs.complete import require
from ..runs.manifest import HYPERPARAMETERS, RESUMING, verify
from ..settings import LIMITS, TrainConfig, from_record, inapplicable
from ..training.callbacks import Callback, Checkpointer
from ..training.checkpoint import load_checkpoint
from ..training.distributed import SINGLE, DistContext, broadcast
from ..training.loggers import make_logger
from ..training.rundir import RunLock, discard_if_empty, discard_unstarted, new_run_dir
from ..training.state import TrainState
from ..training.trainer import NonFiniteLoss, Trainer
from .run_files import check_data_unchanged, write_run_files

TRAIN_FIELDS = {f.name for f in fields(TrainConfig)}


@dataclass
class TrainResult:
    run_dir: Path
    state: TrainState
    interrupted_by: int | None = None  # the signal that stopped the run early (SIGINT, SIGTERM, SIGHUP)


@dataclass
class HeadStart:
    """A run already under way before its directory exists (``--preset auto``'s race winner): its task with
    the data read, its model config as built, the model, the trainer that trains it and where it stands
    (``None`` once dropped)."""

    task: Any
    config: Config
    model: torch.nn.Module | None
    trainer: Trainer | None
    state: TrainState | None


PRESET_MODELS: dict[str, Config] = {}  # each preset's model as published (``presets`` fills it: it imports this)


@dataclass(frozen=True)
class Recipe:
    family: str
    model: Config
    train: TrainConfig
    data: Any  # the family's data settings: ``families.FAMILIES[family].task.Settings``
    preset: str | None = None  # the preset it started from
    notes: str = ""  # what backs its settings (a command in benchmarks/ or experiments/)

    def __post_init__(self) -> None:
        fam = family(self.family)
        if not isinstance(self.model, fam.config):
            raise ConfigError(f"the model config is for a {self.model.family}, not a {self.family}")
        if not isinstance(self.data, fam.task.Settings):
            raise ConfigError(f"the data settings are {type(self.data).__name__}, not a {self.family}'s")

    # ----------------------------------------------------------------- changing it
    def override(self, model: Sequence[str] | dict[str, Any] = (), **settings: Any) -> Recipe:  # noqa: ANN401
        """A copy with model fields (``["n_blocks=6"]``, ``{"n_blocks": 6}``, or by keyword: ``members=1``) and
        trainer or data settings (by keyword) changed; a name that is both a model field and a setting
        (``vocab_size``) is the setting. Giving any limit (``epochs``, ``max_steps``, ``max_minutes``)
        replaces all of the recipe's limits."""
        data_fields = {f.name for f in fields(self.data)}
        model_fields = {f.name for f in fields(self.model)} - TRAIN_FIELDS - data_fields
        keyed = {k: settings.pop(k) for k in list(settings) if k in model_fields}
        unknown = sorted(set(settings) - TRAIN_FIELDS - data_fields)
        if unknown:
            raise ConfigError(
                f"unknown {self.family} setting(s): {', '.join(unknown)}; valid: "
                f"{', '.join(sorted(TRAIN_FIELDS | data_fields))}, and the model's fields "
                f"{', '.join(sorted(model_fields))}"
            )
        train = {k: v for k, v in settings.items() if k in TRAIN_FIELDS}
        if any(k in LIMITS for k in train):
            train = {**{k: None for k in LIMITS}, **train}
        data = {k: v for k, v in settings.items() if k in data_fields}
        given = [str(m).partition("=")[0].strip() for m in model] if isinstance(model, list | tuple) else list(model)
        given += list(keyed)
        # share_embeddings is the user's switch, which the data can only turn off (separate vocabularies)
        decided = [k for k in given if k in self.model.data_fields and k != "share_embeddings"]
        if decided:
            raise ConfigError(
                f"{', '.join(decided)} {'is' if len(decided) == 1 else 'are'} set from the data when training "
                "starts (vocabulary sizes and special ids from the tokenizer, n_labels from --labels), so --set "
                f"cannot change {'it' if len(decided) == 1 else 'them'}; --print-config shows the values the data gives"
            )
        try:
            changed = dataclasses.replace(
                self,
                model=apply_overrides(
                    apply_overrides(self.model, model if isinstance(model, dict) else list(model)), keyed
                ),
                train=dataclasses.replace(self.train, **train),
                data=dataclasses.replace(self.data, **data),
            )
        except TypeError as err:  # a value of the wrong type that the checks did not name
            raise ConfigError(f"invalid {self.family} setting: {err}") from None
        if unused := inapplicable(changed.data, data):  # given, but the recipe would never use it
            raise ConfigError(unused)
        return changed

    # ----------------------------------------------------------------- as a record
    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "preset": self.preset,
            "model": self.model.to_dict(),
            "train": self.train.to_dict(),
            "data": dataclasses.asdict(self.data),
            "notes": self.notes,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], origin: object = "recipe", *, strict: bool = True) -> Recipe:
        """Rebuild from ``to_dict`` output (``--config``); unknown or missing sections and fields are
        errors naming them. ``strict=False`` reads a run's ``hyperparameters.json``, whose data section
        also records the files' sha256 and sizes."""
        if not isinstance(data, dict):
            raise ConfigError(f"{origin}: a recipe is one JSON object with model, train and data sections")
        name: Any = data.get("family", data.get("task"))  # "task" until 0.2
        try:
            settings_cls = family(name).task.Settings
            model = config_from_dict(data["model"])
            if data["train"] is None or data["data"] is None:
                raise ConfigError(f"{origin}: the train and data sections must be JSON objects")
            train, settings = from_record(data["train"], data["data"], settings_cls, origin, strict=strict)
        except KeyError as err:
            raise ConfigError(f"{origin}: missing section {err}") from None
        except TypeError as err:
            raise ConfigError(f"{origin}: {err}") from None
        notes = data.get("notes", "")
        return cls(name, model, train, settings, data.get("preset"), notes if isinstance(notes, str) else "")

    # ----------------------------------------------------------------- training
    def prepare(self, tokenizers: dict | None = None) -> tuple[Any, Config]:  # noqa: ANN401
        """The family's task with its data read, and the model config with the fields the data decides."""
        task = family(self.family).task.prepare(self.data, self.model, self.train.seed, tokenizers)
        config = task.model_config(self.model)
        self._say_what_the_data_replaced(config)
        return task, config

    def _say_what_the_data_replaced(self, config: Config) -> None:
        """A warning for each field the data decides that was given a value of its own (in a ``--config``
        file, or a ``Recipe`` built in Python) which the data's replaces: ``--set`` refuses them at once."""
        try:  # the placeholders a value is not the user's own: the class default's, the preset's
            starts = [type(self.model)(), *([PRESET_MODELS[self.preset]] if self.preset in PRESET_MODELS else [])]
        except (TypeError, ConfigError):
            return
        for name in self.model.data_fields:
            mine, data = getattr(self.model, name), getattr(config, name)
            if name != "share_embeddings" and mine != data and all(mine != getattr(s, name) for s in starts):
                warn(
                    f"the model's {name} {mine!r} is replaced by {data!r} from the data ({name} is set from the "
                    "data: vocabulary sizes and special ids from the tokenizer, the classes from the labels)"
                )

    def resolved(self) -> Recipe:
        """This recipe with the model fields the data decides (vocabulary sizes, labels, special ids)
        computed from the data: exactly what ``run`` will train."""
        return dataclasses.replace(self, model=self.prepare()[1])

    def run(
        self,
        out: str | Path | None = None,
        *,
        callbacks: Sequence[Callback] = (),
        log: Callable[[str], Any] = print,
        dist_ctx: DistContext = SINGLE,
        resume_dir: str | Path | None = None,
        budget: Budget | None = None,
        head: HeadStart | None = None,
        race: Sequence[dict[str, Any]] = (),
    ) -> TrainResult:
        """Train (a new run in ``out``, default ``outputs/YYYYmmdd_HHMM``; or continue ``resume_dir``).

        The run directory is locked for the whole training (``RunLock``). A run to resume that was
        stopped before its first checkpoint starts again from step 0 with its recorded settings. A new
        run that fails before its first file is written leaves no folder behind. ``budget``: the wall
        clock of ``max_minutes`` (default: begun now); ``head``: a run trained so far (a race's winner),
        continued in the new directory; ``race``: the table of the race that chose the recipe (recorded).
        """
        if budget is None and self.train.max_minutes is not None:
            budget = Budget(self.train.max_minutes)
        created = not resume_dir and (out is None or not Path(out).exists())
        if resume_dir:
            run_dir = Path(resume_dir)
        else:
            run_dir = broadcast(new_run_dir(out) if dist_ctx.is_main else None, dist_ctx)  # rank 0 names the run
        try:
            with RunLock(run_dir) if dist_ctx.is_main else contextlib.nullcontext():
                resuming = broadcast(resume_dir is not None and latest_checkpoint(run_dir) is not None, dist_ctx)
                if resume_dir and not resuming:
                    require(run_dir, "resume")  # no checkpoint: from step 0 only if it never trained
                    log(f"{run_dir} has no checkpoint yet: training its recorded settings from step 0")
                if resuming:
                    read = [
                        HYPERPARAMETERS,
                        "config.json",
                        *(f"{n}.json" for n in self.model.tokenizers),
                    ]
                    verify(run_dir, read, what_to_do=RESUMING)  # the files it reads: listed, unchanged
                    verify(run_dir, None, what_to_do=RESUMING)  # and every other file it recorded
                if head is None:
                    task, config = self.prepare(load_tokenizers(run_dir, self.family) if resuming else None)
                else:
                    task, config = head.task, head.config
                if resume_dir:
                    check_data_unchanged(run_dir, task.describe())
                elif task.note:
                    log(task.note)
                hooks = [Checkpointer(run_dir, self.train.checkpoint_every), *callbacks]
                fam = family(self.family)
                if self.train.snapshots and "timeline" in fam.actions:
                    hooks.append(Timeline(run_dir, task, self.train.snapshots, fam.probe))
                if self.train.logger and dist_ctx.is_main:
                    hooks.append(make_logger(self.train.logger, run_dir, self.train.to_dict()))
                if head is None:
                    torch.manual_seed(self.train.seed)  # weight initialisation (a resumed run loads its weights)
                    model = build_model(config)
                    trainer = Trainer(
                        model, task, self.train, callbacks=hooks, log=log, dist_ctx=dist_ctx, budget=budget
                    )
                    state = None
                else:  # the race's winner goes on: what the budget has left is its to train in
                    assert head.model is not None and head.trainer is not None and head.state is not None
                    model, trainer, state = head.model, head.trainer, head.state
                    trainer.callbacks.extend(hooks)
                    trainer.log, trainer.budget, state.budget_s = log, budget, None
                if budget is not None:
                    budget.lap("reading the data")
                if resuming:
                    loaded = load_checkpoint(run_dir, model, trainer.optimizer, rank=dist_ctx.rank, family=self.family)
                    state = TrainState.from_dict(loaded)
                    log(f"resumed {run_dir} at step {state.step}")
                else:
                    train = (
                        trainer.fit_warmup_to_run() if head is None else trainer.config
                    )  # recorded: resuming keeps it
                    if dist_ctx.is_main:
                        ran = dataclasses.replace(self, model=config, train=train)
                        trained = 0.0 if state is None else state.elapsed
                        write_run_files(run_dir, ran, task, model, trainer, budget, trained, race)
                trained_before = 0.0 if state is None else state.elapsed
                try:
                    state = trainer.fit(state)
                except NonFiniteLoss as err:
                    last = latest_checkpoint(run_dir)
                    where = f"the last good checkpoint is {last}" if last else "no checkpoint was written yet"
                    raise NonFiniteLoss(f"{err}, {where}") from None
                if budget is not None:
                    budget.lap("training", state.elapsed - trained_before)
                if dist_ctx.is_main:
                    require(run_dir, "saved")  # a folder deleted or emptied while it trained is no saved run
                if budget is not None:
                    budget.lap("final evaluation and saving")
                    log(f"the time budget, {budget.account()}")
                    if dist_ctx.is_main:
                        atomic_write_json(run_dir / "budget.json", budget.record())
                log(f"run saved in {run_dir}")
        except Exception:
            if created and dist_ctx.is_main:
                discard_unstarted(run_dir)  # failed before its first checkpoint: leave nothing half-made
            raise
        except BaseException:
            if created and dist_ctx.is_main:
                discard_if_empty(run_dir)  # interrupted: a run with its settings written can be resumed
            raise
        return TrainResult(run_dir, state, trainer.interrupted_by)

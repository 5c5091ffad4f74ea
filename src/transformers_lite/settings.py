"""``TrainConfig``: every setting the trainer reads, with its help text; saved in ``hyperparameters.json``.

The defaults here are generic; each preset's recipe (``recipes``) sets its own. The command line is
generated from these fields (``cli.options``), so ``--help`` and the code share one source of truth.

Limits: ``epochs``, ``max_steps`` and ``max_minutes`` (at least one). Training stops at the first
limit reached, and the learning-rate schedule spans the same limits: with a step limit it decays
over the steps, with a time budget over the elapsed time (see ``optim.Schedule``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from . import validate
from .errors import ConfigError

SCHEDULES = ("cosine", "inverse_sqrt", "constant", "wsd")
OPTIMIZERS = ("adamw", "muon")
LIMITS = ("epochs", "max_steps", "max_minutes")


def setting(text: str, default: Any = None, **kw: Any) -> Any:  # noqa: ANN401
    """A dataclass field with its command-line help: ``choices``, ``none`` (what ``None`` means),
    ``path`` (a file name), ``applies`` (``(field, values)``: the setting is used only when that field
    holds one of the values; ``inapplicable`` names a given one that is not) and ``absent`` (the value a
    record written before the setting existed means: what that release did, read by ``from_record``) may
    follow as keywords."""
    return field(default=default, metadata={"help": text, **kw})


MUON_LR = 0.01  # Muon's default rate: the best of 0.005-0.05 for baby-gpt (experiments/speedrun_ablation.py)


@dataclass(frozen=True)
class TrainConfig:
    lr: float = setting(
        "peak learning rate (AdamW's; with --optimizer muon, of the parameters Muon does not step)", 1e-3
    )
    optimizer: str = setting(
        "adamw, or muon: orthogonalised momentum on the blocks' matrices (at --muon-lr), AdamW on the rest",
        "adamw",
        choices=OPTIMIZERS,
    )
    muon_lr: float = setting("Muon's peak learning rate", MUON_LR, applies=("optimizer", ("muon",)))
    weight_decay: float = setting("AdamW weight decay on matrices (biases and norms are never decayed)", 0.01)
    beta1: float = setting("AdamW beta1", 0.9)
    beta2: float = setting("AdamW beta2", 0.99)
    schedule: str = setting("learning-rate schedule after warmup", "cosine", choices=SCHEDULES)
    warmup_steps: int = setting("linear warmup steps", 100)
    min_lr_ratio: float = setting("the schedule's floor as a fraction of the peak learning rate", 0.1)
    cooldown: float = setting(
        "wsd (warmup, stable, decay): the fraction of the run spent decaying linearly to the floor",
        0.4,
        applies=("schedule", ("wsd",)),
    )
    ema: float = setting(
        "evaluate and save an exponential moving average of the weights with this decay per step (0 = the "
        "weights themselves)",
        0.0,
    )
    grad_clip: float = setting("clip the gradient norm to this value (0 = no clipping)", 1.0)
    accumulate: int = setting("micro-batches per optimizer step", 1)
    epochs: float | None = setting("stop after this many epochs", None, none="no epoch limit")
    max_steps: int | None = setting("stop after this many optimizer steps", None, none="no step limit")
    max_minutes: float | None = setting(
        "wall-clock budget; the schedule ends with it and a checkpoint is saved", None, none="no time limit"
    )
    stop_at: int | None = setting(
        "pause at this step with a checkpoint; --resume continues the same schedule", None, none="no pause"
    )
    log_every: int = setting("optimizer steps between training-loss rows of metrics.csv (0 = evaluations only)", 50)
    logger: str | None = setting(
        "also log every metrics row to TensorBoard (RUN/tensorboard) or Weights & Biases",
        None,
        none="metrics.csv only",
        choices=("tensorboard", "wandb"),
    )
    eval_every: int = setting(
        "optimizer steps between evaluations (0 = at every epoch end); training also ends with one", 500
    )
    eval_train: bool = setting(
        "also score the whole training split at each evaluation (train_full_loss, train_full_accuracy, ...: "
        "the gap to "
        "validation shows overfitting, as in post 000's dropout figure)",
        False,
    )
    eval_at_start: bool = setting("evaluate once before the first step (a step-0 row, as the posts' train!)", False)
    checkpoint_every: int | None = setting("optimizer steps between checkpoints", None, none="at every evaluation")
    patience: int | None = setting(
        "stop after this many evaluations without a better --best-metric", None, none="no early stopping"
    )
    best_metric: str | None = setting(
        "the validation metric that picks the best evaluation (--keep-best, --patience): a column of "
        "history.json such as val_loss, val_accuracy, val_macro_f1 or val_bleu (the val_ may be left out); "
        "lower is better for losses, perplexity and MAE, higher for the rest",
        None,
        none="the family's main one: macro-F1 for a classifier, BLEU for a translator, else the validation loss",
        absent="val_loss",
    )
    keep_best: bool = setting(
        "at the end, save (and leave in the model) the weights of the best evaluation by --best-metric "
        "instead of the last step's; the checkpoints keep the last ones, so --resume continues the run",
        True,
        absent=False,
    )
    snapshots: int = setting(
        "the training timeline: at most this many snapshots of the model on a validation example, taken at "
        "step 0, at evaluations and in between, spread over the run (RUN/snapshots; 0 = none)",
        16,
    )
    bf16: bool = setting("bfloat16 autocast", False)
    compile: bool = setting("torch.compile the model", False)
    seed: int = setting("random seed (weights, batches, dropout)", 0)
    device: str = setting("where to train: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps", "auto")

    def __post_init__(self) -> None:
        validate.flags(self)
        validate.choice("schedule", self.schedule, SCHEDULES)
        validate.choice("optimizer", self.optimizer, OPTIMIZERS)
        validate.number("lr", self.lr, 0, low_open=True)
        validate.number("muon_lr", self.muon_lr, 0, low_open=True)
        validate.number("cooldown", self.cooldown, 0, 1)
        validate.number("ema", self.ema, 0, 1, high_open=True)
        validate.number("weight_decay", self.weight_decay, 0)
        validate.number("grad_clip", self.grad_clip, 0)
        validate.number("beta1", self.beta1, 0, 1, high_open=True)
        validate.number("beta2", self.beta2, 0, 1, high_open=True)
        validate.number("min_lr_ratio", self.min_lr_ratio, 0, 1)
        validate.choice("logger", self.logger, (None, "tensorboard", "wandb"))
        for name, low in (
            ("warmup_steps", 0),
            ("eval_every", 0),
            ("log_every", 0),
            ("accumulate", 1),
            ("snapshots", 0),
        ):
            validate.integer(name, getattr(self, name), low)
        validate.seed("seed", self.seed)
        if self.best_metric is not None and not re.fullmatch(r"[a-z][a-z0-9_]*", str(self.best_metric)):
            raise ConfigError(
                f"best_metric must be a metric's name such as val_macro_f1 or val_loss, got {self.best_metric!r}"
            )
        for name in ("max_steps", "stop_at", "checkpoint_every", "patience"):
            validate.integer(name, getattr(self, name), 1, optional=True)
        for name in ("epochs", "max_minutes"):
            validate.number(name, getattr(self, name), 0, low_open=True, optional=True)
        if all(getattr(self, name) is None for name in LIMITS):
            raise ConfigError("give at least one limit: --epochs, --max-steps or --max-minutes")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def replace(self, **changes: Any) -> TrainConfig:  # noqa: ANN401
        return dataclasses.replace(self, **changes)


def from_record(train: Any, data: Any, settings_cls: type, origin: object, *, strict: bool = True) -> tuple[Any, Any]:  # noqa: ANN401
    """``(TrainConfig, settings_cls)`` from recorded sections (a ``--config`` file, a run's
    ``hyperparameters.json``), validated by the classes that training applies, so a recorded ``lr`` of
    ``"abc"`` or ``Infinity`` is refused by name where it is read, not where it is used. Unknown fields
    are errors when ``strict`` (a run's data section also records sha256 and sizes: ``strict=False``); a
    section that is ``None`` (an imported run trained nothing) is not checked and gives ``None``."""
    out: list[Any] = []
    for section, cls, values in (("train", TrainConfig, train), ("data", settings_cls, data)):
        if values is None:
            out.append(None)
            continue
        if not isinstance(values, dict):
            raise ConfigError(f"{origin}: the {section} section must be a JSON object")
        known = {f.name for f in fields(cls)}
        # a record written before a setting existed means what that release did (its ``absent`` value)
        values = {**{f.name: f.metadata["absent"] for f in fields(cls) if "absent" in f.metadata}, **values}
        extra = sorted(set(values) - known)
        if extra and strict:
            raise ConfigError(
                f"{origin}: unknown {section} setting(s) {', '.join(extra)}; valid: {', '.join(sorted(known))}"
            )
        try:
            out.append(cls(**{k: v for k, v in values.items() if k in known}))
        except TypeError as err:
            raise ConfigError(f"{origin}: {err}") from None
    return out[0], out[1]


def inapplicable(settings: Any, given: Iterable[str]) -> str | None:  # noqa: ANN401
    """A sentence naming the ``given`` fields of ``settings`` that it would record and never use (their
    ``applies`` condition is false: ``vocab_size`` with the character tokenizer), or ``None``."""
    by_name = {f.name: f for f in fields(settings)}
    unused = []
    for name in given:
        condition = by_name[name].metadata.get("applies") if name in by_name else None
        if condition and getattr(settings, condition[0]) not in condition[1]:
            field_name, values = condition
            shown, now = " or ".join(repr(v) for v in values), getattr(settings, field_name)
            option, depends = f"--{name.replace('_', '-')}", f"--{field_name.replace('_', '-')}"
            unused.append(f"{name} ({option}) is used only when {field_name} ({depends}) is {shown}, and it is {now!r}")
    if not unused:
        return None
    return f"{'; '.join(unused)}: the setting would be recorded and ignored, so drop it or change what it depends on"

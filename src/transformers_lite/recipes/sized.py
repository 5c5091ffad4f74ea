"""``--preset auto`` for the classifier and the translator: the model sized to the minutes and to the data.

A larger model learns more per pass over the data but takes longer per pass, so within a time budget
the best one is the largest whose minutes still buy enough passes over *this* data. Unlike the
generator's sizes (``auto``, whose steps come from a sweep on one text), what a classifier or a
translator needs depends on how many records it is given, which is known only once the data is read:
so each candidate reads the data as its run will (its tokenizer, its batches), times a few training
steps on those batches with the trainer that will train it, and counts the steps of one epoch. The rule
is then one line: the largest candidate (smallest first) whose minutes at its measured speed buy
``EPOCHS`` epochs of this data, capped by the user's ``--max-steps``/``--epochs``; the smallest when
none does (the choice line then says it will not finish them). The rule is in steps, so a machine
twice as slow (or busy) chooses as a budget half as long would. The choice and its reason are the
recipe's ``notes``, recorded in the run: ``--resume`` reads them and measures nothing.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..devices import resolve_device
from ..errors import ConfigError
from ..models import build_model
from ..training.state import TrainState
from ..training.trainer import Trainer
from ..validate import INT_MAX
from .auto import MEASURED_STEPS, WARMUP_STEPS, noted, planned_steps
from .presets import get_preset
from .recipe import Recipe


@dataclass(frozen=True)
class Candidate:
    name: str  # as printed and recorded
    preset: str
    model: tuple[str, ...] = ()  # the model fields it changes (``--set`` syntax)


# smallest first. Classifier: the default recipe with 1, 4 and 8 members (an 8-member ensemble costs eight
# classifiers' steps; docs/results/classifier.md: 1 -> 3 -> 5 -> 8 members gain less each time). Translator:
# seq2seq-tiny (d 64, 2 + 2 blocks) then seq2seq-budget (seq2seq-small's model, Muon, the budget its only limit)
CANDIDATES: dict[str, tuple[Candidate, ...]] = {
    "classifier": (
        Candidate("classifier with 1 member", "classifier", ("members=1",)),
        Candidate("classifier with 4 members", "classifier", ("members=4",)),
        Candidate("classifier with 8 members", "classifier"),
    ),
    "seq2seq": (Candidate("seq2seq-tiny", "seq2seq-tiny"), Candidate("seq2seq-budget", "seq2seq-budget")),
}
# the passes over the training data a candidate must get to be chosen over a smaller one. Classifier: the 3
# epochs its recipe was tuned with (docs/results/classifier.md: validation loss lowest after epoch 2 or 3); a
# user trial on 5.4k fortunes (2-core CPU, 3 minutes) had one member trained its 3 epochs (0.523 macro-F1) beat
# 8 members cut short on a busy machine (0.453). Translator: seq2seq-small's greedy BLEU on Multi30k stood at
# ~5 after 1.2 epochs and ~25-32 after 2.4-3 (docs/results/translator.md, time to BLEU), so below 3 epochs the
# small model has not yet learned to translate and the tiny one, trained through, does better
EPOCHS = 3


@dataclass(frozen=True)
class Speed:
    """A candidate measured on this machine and this data: optimizer steps per second, steps per epoch."""

    rate: float
    steps_per_epoch: int


def needed_steps(speed: Speed, epochs: float | None = None) -> int:
    """The steps a candidate needs: ``EPOCHS`` epochs of the data, or the run's own ``--epochs`` if fewer."""
    return math.ceil(min(EPOCHS, epochs or EPOCHS) * speed.steps_per_epoch)


def run_steps(minutes: float, speed: Speed, max_steps: int | None = None, epochs: float | None = None) -> int:
    """The steps a run takes: what the minutes buy at ``speed``, capped by ``max_steps`` and ``epochs``."""
    steps = planned_steps(minutes, speed.rate, max_steps)
    return steps if epochs is None else min(steps, math.ceil(epochs * speed.steps_per_epoch))


def choose(
    minutes: float, speeds: dict[str, Speed], max_steps: int | None = None, epochs: float | None = None
) -> tuple[str, str]:
    """The largest candidate (``speeds`` is smallest first) whose ``minutes`` buy the steps it needs
    (``needed_steps``), or the smallest; and a sentence saying why."""
    names = list(speeds)
    cap = "".join(
        f", at most {flag} {value:,}" for flag, value in (("--max-steps", max_steps), ("--epochs", epochs)) if value
    )
    chosen, why = names[0], ""
    for i, name in enumerate(names):
        speed = speeds[name]
        steps, needed = run_steps(minutes, speed, max_steps, epochs), needed_steps(speed, epochs)
        n = needed / speed.steps_per_epoch
        passes = f"{n:g} epoch{'' if n == 1 else 's'} of {speed.steps_per_epoch:,} steps"
        if steps >= needed or i == 0:
            chosen = name
            why = f"{name}: {minutes:g} min x {speed.rate:.2f} steps/s{cap} = {steps:,} steps"
            if steps >= needed:
                why += f" >= the {needed:,} of {passes} it needs"
            else:  # even the smallest cannot: trained as far as the minutes go, and said so
                why += f", short of the {needed:,} of {passes} (give more minutes to train it through)"
        if steps < needed:
            if i:
                why += f"; {name} would get {steps:,} of the {needed:,} steps of {passes}"
            break
    return chosen, why


def measure(recipe: Recipe) -> Speed:
    """``recipe`` timed as it will train on this machine: its data read and tokenized as its run reads
    them, its model built from the data, and ``MEASURED_STEPS`` optimizer steps of the trainer that will
    train it (batch size, accumulation, bfloat16, device, optimizer) timed after ``WARMUP_STEPS`` untimed
    ones, on batches spread over the first epoch (short and long ones alike). The random state is
    restored afterwards and the data's warnings are left to the run, which reads the data again."""
    device = torch.device(resolve_device(recipe.train.device))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task, config = recipe.prepare()
    # a step limit no measurement reaches, and no budget (its clock would stop a step between micro-batches)
    train = recipe.train.replace(max_minutes=None, max_steps=INT_MAX, epochs=None, stop_at=None)
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        model = build_model(config)
        trainer = Trainer(model, task, train, log=lambda *_: None)
        epoch, state = trainer.steps_per_epoch, TrainState()
        at = [i * epoch // (WARMUP_STEPS + MEASURED_STEPS) for i in range(WARMUP_STEPS + MEASURED_STEPS)]
        for step in at[:WARMUP_STEPS]:
            state.step = step
            trainer.train_step(state)
        _sync(device)
        start = time.perf_counter()
        for step in at[WARMUP_STEPS:]:
            state.step = step
            trainer.train_step(state)
        _sync(device)
        return Speed(MEASURED_STEPS / (time.perf_counter() - start), epoch)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def describe(recipe: Recipe) -> str:
    """What the measurement of ``recipe`` ran with, in words (printed, and kept in the run's notes)."""
    train, data = recipe.train, recipe.data
    batch = f"{data.max_tokens:,}-token batches" if hasattr(data, "max_tokens") else f"batches of {data.batch_size}"
    accumulate = f" x {train.accumulate} micro-batches" if train.accumulate > 1 else ""
    precision = "bfloat16" if train.bf16 else "float32"
    return f"{batch}{accumulate} of this data, {precision} on {resolve_device(train.device)}"


def sized_recipe(
    family: str,
    minutes: float | None,
    model_overrides: Sequence[str] = (),
    settings: dict[str, Any] | None = None,
    log: Callable[[str], object] = print,
) -> Recipe:
    """The ``family`` recipe ``--preset auto`` trains for ``minutes`` on this machine and this data (see the
    module): each candidate with the user's ``model_overrides`` (``--set``) and ``settings`` (the data
    files, ``--batch-size``, ``--max-steps``, ...) applied, measured and chosen as it will train."""
    if family not in CANDIDATES:
        raise ConfigError(f"--preset auto sizes the generator, the classifier and the translator, not the {family}")
    if not minutes or minutes <= 0:
        raise ConfigError("--preset auto chooses a model for a time budget: give --max-minutes N")
    settings = {**(settings or {}), "max_minutes": minutes}
    recipes: dict[str, Recipe] = {}
    speeds: dict[str, Speed] = {}
    for candidate in CANDIDATES[family]:
        recipe = get_preset(candidate.preset).override([*candidate.model, *model_overrides], **settings)
        recipes[candidate.name], speeds[candidate.name] = recipe, measure(recipe)
        limits = recipe.train.max_steps, recipe.train.epochs
        if run_steps(minutes, speeds[candidate.name], *limits) < needed_steps(speeds[candidate.name], limits[1]):
            break  # a larger candidate would get even fewer steps
    first = recipes[CANDIDATES[family][0].name]
    chosen, why = choose(minutes, speeds, first.train.max_steps, first.train.epochs)
    recipe = recipes[chosen]
    measured = ", ".join(f"{name} {speed.rate:.2f}" for name, speed in speeds.items())
    return noted(recipe, why, describe(recipe), measured, log)

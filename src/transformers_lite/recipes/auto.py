"""``--preset auto``: the generator's size chosen for the minutes a user gives, on this machine.

A larger GPT learns more per step but takes longer per step, so within a time budget the best size is
the largest one that still gets enough steps. ``experiments/gpt_budget_sweep.py`` trained each size
for several budgets on tiny Shakespeare (docs/results/generator.md); from it, each size's
``min_steps`` is the number of steps from which it beat the size below it at equal wall time. At the
start of training each candidate's step speed is measured on this machine (a few steps on random
ids), and the largest size whose budget buys its ``min_steps`` is chosen. The rule is in steps, not
minutes, so a machine twice as slow picks as a budget half as long would. The choice and its reason
are the recipe's ``notes``, recorded in the run: ``--resume`` reads them and measures nothing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F

from ..config import GeneratorConfig
from ..errors import ConfigError
from ..models import build_model
from ..training.optim import make_optimizer
from .presets import get_preset
from .recipe import Recipe

WARMUP_STEPS, MEASURED_STEPS = 2, 5  # per candidate: untimed (allocation, first-call costs), then timed


@dataclass(frozen=True)
class Size:
    preset: str
    min_steps: int  # the steps from which it beats the size below it (the sweep)


# smallest first; the crossings measured (docs/results/generator.md): baby-gpt lost to post-gpt at 1,019 steps
# (+0.178) and beat it at 2,097 (-0.007); small-gpt lost to baby-gpt at 991 steps (+0.267) and tied at 3,110
# (-0.004); each threshold is where the loss difference, interpolated in log steps, crosses zero
SIZES = (Size("post-gpt", 0), Size("baby-gpt", 2_000), Size("small-gpt", 3_000))


def steps_per_second(recipe: Recipe) -> float:
    """Training steps per second of ``recipe``'s model and batch on this machine: forward, loss, backward
    and an AdamW step on random ids, timed after two warm-up steps. The random state is restored
    afterwards, so the run's random streams are untouched."""
    cfg, batch = cast(GeneratorConfig, recipe.model), recipe.data.batch_size
    with torch.random.fork_rng(devices=[]):
        model = build_model(cfg).train()
        ids = torch.randint(0, cfg.vocab_size, (batch, cfg.max_length + 1))  # (B, T + 1): inputs and next ids
    optimizer = make_optimizer(model, recipe.train.lr, recipe.train.weight_decay)

    def step() -> None:
        logits = model(ids[:, :-1])  # (B, T, V)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(WARMUP_STEPS):
        step()
    start = time.perf_counter()
    for _ in range(MEASURED_STEPS):
        step()
    return MEASURED_STEPS / (time.perf_counter() - start)


def choose(minutes: float, rates: dict[str, float]) -> tuple[str, str]:
    """The largest size whose ``minutes`` at its measured rate (steps per second) buy its ``min_steps``,
    and a sentence saying why."""
    chosen, why = SIZES[0].preset, ""
    for size in SIZES:
        steps = int(minutes * 60 * rates[size.preset])
        if steps >= size.min_steps:
            chosen = size.preset
            why = f"{size.preset}: {minutes:g} min x {rates[size.preset]:.1f} steps/s = {steps:,} steps"
            why += f" >= the {size.min_steps:,} it needs" if size.min_steps else ""
        else:
            why += f"; {size.preset} would get {steps:,} of the {size.min_steps:,} steps it needs"
            break
    return chosen, why


def auto_recipe(minutes: float | None, log: Callable[[str], object] = print) -> Recipe:
    """The generator recipe ``--preset auto`` trains for ``minutes`` on this machine (see the module)."""
    if not minutes or minutes <= 0:
        raise ConfigError("--preset auto chooses a model for a time budget: give --max-minutes N")
    rates: dict[str, float] = {}
    for size in SIZES:
        rates[size.preset] = steps_per_second(get_preset(size.preset))
        if int(minutes * 60 * rates[size.preset]) < size.min_steps:
            break  # a larger size would get even fewer steps
    chosen, why = choose(minutes, rates)
    measured = ", ".join(f"{name} {rate:.1f}" for name, rate in rates.items())
    log(f"--preset auto: {why} (steps/s measured here: {measured})")
    recipe = get_preset(chosen)
    notes = f"--preset auto chose {why} (steps/s measured: {measured}); {recipe.notes}"
    return dataclasses.replace(recipe, notes=notes)

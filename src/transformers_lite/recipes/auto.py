"""``--preset auto``: the generator's size chosen for the minutes a user gives, on this machine.

A larger GPT learns more per step but takes longer per step, so within a time budget the best size is
the largest one that still gets enough steps. ``experiments/gpt_budget_sweep.py`` trained each size
for several budgets on tiny Shakespeare (docs/results/generator.md); from it, each size's
``min_steps`` is the number of steps from which it beat the size below it at equal wall time, one
threshold per optimizer (a Muon step learns more than an AdamW step). At the start of training each
candidate's step speed is measured on this machine (a few steps on random ids, with its optimizer), and
the largest size whose budget buys the steps it needs is chosen. The rule is in steps, not
minutes, so a machine twice as slow picks as a budget half as long would. The choice and its reason
are the recipe's ``notes``, recorded in the run: ``--resume`` reads them and measures nothing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F

from ..config import GeneratorConfig
from ..devices import resolve_device
from ..errors import ConfigError
from ..models import build_model
from ..training.optim import make_optimizer
from .presets import get_preset
from .recipe import Recipe

WARMUP_STEPS, MEASURED_STEPS = 2, 5  # per candidate: untimed (allocation, first-call costs), then timed


@dataclass(frozen=True)
class Size:
    preset: str
    min_steps: int  # the steps from which it beats the size below it, trained with AdamW (the sweep)
    min_steps_muon: int  # the same with Muon: a Muon step learns more, so a larger size pays off sooner

    def needs(self, optimizer: str) -> int:
        """The steps this size needs to beat the size below it when trained with ``optimizer``."""
        return self.min_steps_muon if optimizer == "muon" else self.min_steps


# smallest first; the crossings measured (docs/results/generator.md). AdamW: baby-gpt lost to post-gpt at
# 1,019 steps (+0.178) and beat it at 2,097 (-0.007); small-gpt lost to baby-gpt at 991 steps (+0.267) and tied
# at 3,110 (-0.004); each threshold is where the loss difference, interpolated in log steps, crosses zero.
# Muon (baby-gpt and small-gpt train with it; experiments/speedrun_ablation.py --steps N, seed 0): baby-gpt at
# 500 and 1,000 steps (1.9011, 1.7361) against post-gpt at 1,500 and 3,000 (1.8577, 1.7729), post-gpt taking 3.0
# to 3.6 steps in the time of one of baby-gpt's: the crossing falls at 725 to 890 steps, so 800. small-gpt in
# 5 minutes (884 steps, 1.6182) lost to baby-gpt in the same 5 minutes (1.5464) by 0.072, a quarter of AdamW's
# gap at that many steps; at AdamW's rate of closing (0.16 a doubling) or half of it the crossing falls at 1,200
# to 1,700 steps, so 1,500 (a 15-minute budget buys small-gpt about 2,700 Muon steps here)
SIZES = (Size("post-gpt", 0, 0), Size("baby-gpt", 2_000, 800), Size("small-gpt", 3_000, 1_500))


def steps_per_second(recipe: Recipe) -> float:
    """Optimizer steps per second of ``recipe`` as it will train on this machine: its model, batch size,
    accumulation, bfloat16 setting and device; forward, loss, backward and an AdamW step on random ids over
    ``vocabulary(recipe)``, timed after two warm-up steps. The random state is restored afterwards, so
    the run's random streams are untouched."""
    cfg, batch = cast(GeneratorConfig, recipe.model), recipe.data.batch_size
    device = torch.device(resolve_device(recipe.train.device))
    with torch.random.fork_rng(devices=[]):
        model = build_model(cfg.replace(vocab_size=vocabulary(recipe))).to(device).train()
        ids = torch.randint(0, vocabulary(recipe), (batch, cfg.max_length + 1), device=device)  # (B, T + 1)
    train = recipe.train
    optimizer = make_optimizer(model, train.lr, train.weight_decay, kind=train.optimizer, muon_lr=train.muon_lr)
    bf16 = torch.autocast(device.type, dtype=torch.bfloat16, enabled=recipe.train.bf16)

    def step() -> None:
        for _ in range(recipe.train.accumulate):  # one optimizer step is this many micro-batches
            with bf16:
                logits = model(ids[:, :-1])  # (B, T, V)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), ids[:, 1:].reshape(-1))
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(WARMUP_STEPS):
        step()
    _sync(device)
    start = time.perf_counter()
    for _ in range(MEASURED_STEPS):
        step()
    _sync(device)
    return MEASURED_STEPS / (time.perf_counter() - start)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def vocabulary(recipe: Recipe) -> int:
    """The vocabulary the measurement assumes: a BPE's ``vocab_size``, or the preset's characters (the data
    sets the real one when training starts, after the choice)."""
    return recipe.data.vocab_size if recipe.data.tokenizer == "bpe" else cast(GeneratorConfig, recipe.model).vocab_size


def describe(recipe: Recipe) -> str:
    """What the measurement of ``recipe`` ran with, in words (printed, and kept in the run's notes)."""
    train, model = recipe.train, cast(GeneratorConfig, recipe.model)
    words = [
        f"batch size {recipe.data.batch_size}"
        + (f" x {train.accumulate} micro-batches" if train.accumulate > 1 else ""),
        f"{model.max_length} tokens a window",
        f"random ids over a vocabulary of {vocabulary(recipe)}",
        f"{'bfloat16' if train.bf16 else 'float32'} on {resolve_device(train.device)}",
    ]
    if train.epochs:
        words.append("an --epochs limit not counted (the data is read after the choice)")
    return ", ".join(words)


def planned_steps(minutes: float, rate: float, max_steps: int | None) -> int:
    """The steps a run at ``rate`` steps per second takes: what the minutes buy, capped by ``max_steps``."""
    steps = int(minutes * 60 * rate)
    return steps if max_steps is None else min(steps, max_steps)


def choose(
    minutes: float, rates: dict[str, float], max_steps: int | None = None, optimizers: dict[str, str] | None = None
) -> tuple[str, str]:
    """The largest size whose ``minutes`` at its measured rate (steps per second), capped by ``max_steps``,
    buy the steps it needs with its optimizer (``optimizers``, by preset; AdamW where not given), and a
    sentence saying why."""
    chosen, why = SIZES[0].preset, ""
    cap = "" if max_steps is None else f", at most --max-steps {max_steps:,}"
    for size in SIZES:
        steps = planned_steps(minutes, rates[size.preset], max_steps)
        optimizer = (optimizers or {}).get(size.preset, "adamw")
        needs = size.needs(optimizer)
        if steps >= needs:
            chosen = size.preset
            why = f"{size.preset}: {minutes:g} min x {rates[size.preset]:.1f} steps/s{cap} = {steps:,} steps"
            why += f" >= the {needs:,} it needs with {optimizer}" if needs else ""
        else:
            why += f"; {size.preset} would get {steps:,} of the {needs:,} steps it needs with {optimizer}"
            break
    return chosen, why


def auto_recipe(
    minutes: float | None,
    model_overrides: Sequence[str] = (),
    settings: dict[str, Any] | None = None,
    log: Callable[[str], object] = print,
) -> Recipe:
    """The generator recipe ``--preset auto`` trains for ``minutes`` on this machine (see the module): each
    candidate preset with the user's ``model_overrides`` (``--set``) and ``settings`` (``--batch-size``,
    ``--max-steps``, ...) applied, measured and chosen as it will train."""
    if not minutes or minutes <= 0:
        raise ConfigError("--preset auto chooses a model for a time budget: give --max-minutes N")
    settings = {**(settings or {}), "max_minutes": minutes}
    candidates: dict[str, Recipe] = {}
    rates: dict[str, float] = {}
    for size in SIZES:
        candidates[size.preset] = get_preset(size.preset).override(list(model_overrides), **settings)
        rates[size.preset] = steps_per_second(candidates[size.preset])
        train = candidates[size.preset].train
        if planned_steps(minutes, rates[size.preset], train.max_steps) < size.needs(train.optimizer):
            break  # a larger size would get even fewer steps
    recipe = candidates[SIZES[0].preset]
    max_steps = recipe.train.max_steps
    optimizers = {name: candidate.train.optimizer for name, candidate in candidates.items()}
    chosen, why = choose(minutes, rates, max_steps, optimizers)
    recipe = candidates[chosen]
    measured = ", ".join(f"{name} {rate:.1f}" for name, rate in rates.items())
    return noted(recipe, why, describe(recipe), measured, log)


def noted(recipe: Recipe, why: str, assumed: str, measured: str, log: Callable[[str], object]) -> Recipe:
    """``recipe`` with ``--preset auto``'s choice (``why``, what the measurement ``assumed`` and what it
    ``measured``) logged and kept in its notes, where ``--resume`` reads it instead of measuring again."""
    log(f"--preset auto: {why} (steps/s measured here with {assumed}: {measured})")
    notes = f"--preset auto chose {why} (steps/s measured with {assumed}: {measured}); {recipe.notes}"
    return dataclasses.replace(recipe, notes=notes)

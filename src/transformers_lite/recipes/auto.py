"""``--preset auto``: the recipe chosen on the user's own data, within their minutes, by validation score.

Everything happens inside ``--max-minutes`` (``budget.Budget``): choosing takes at most ``RACE_SHARE``
of it, and the winner trains for the rest. Two decisions, each on the user's data:

* **The size** by the steps it needs, on the speed measured on the user's batches. A larger model learns
  more per step but takes longer per step, so within a time budget the best size is the largest that
  still gets enough steps: the generator's sizes each need the steps from which they beat the size below
  at equal wall time (``experiments/gpt_budget_sweep.py``, docs/results/generator.md); a classifier or a
  translator needs ``EPOCHS`` passes over the data. A race of a few seconds cannot decide this (the
  smaller model learns faster at first and loses by the end), so each size trains a few seconds to
  measure its speed, smallest first, and the largest whose minutes buy its steps is kept.
* **The rest by a race** (``race``, successive halving) on the validation score: the learning rate
  (``LR_FACTORS`` of the preset's), and for a classifier the punctuation-keeping word split and, when
  the classes are imbalanced, balanced class weights, unless the user fixed them. The classifier races
  one-member models (an ensemble's step costs its members' steps: a race of eight-member ensembles would
  get a handful of steps each) and then gives the winner's options the largest ensemble its minutes buy.

The race's winner goes on training where the race left it (a classifier given more members than the
race's one starts again). What was tried, for how long, what each scored and why the winner won are
printed, kept in the run (``hyperparameters.json``: ``race`` and ``notes``), and ``--resume`` reads
them and races nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..budget import Budget
from ..errors import ConfigError
from ..tasks.classifier import read_splits
from ..training.trainer import Trainer
from .presets import get_preset
from .race import Entrant, Race, Score
from .recipe import HeadStart, Recipe

RACE_SHARE = 0.25  # the most of the budget choosing may take; the winner trains for the rest
MEASURE_SHARE = 0.08  # of the race: the seconds each size trains to measure its speed
LR_FACTORS = (0.5, 2.0)  # the learning rates raced beside the preset's, as multiples of it
IMBALANCED = 3.0  # classes are imbalanced when the largest has this many times the records of the smallest
# a classifier or translator needs this many passes over the data to be worth a larger size: the classifier's
# recipe was tuned at 3 epochs (validation loss lowest after epoch 2 or 3, docs/results/classifier.md); seq2seq-
# small's greedy BLEU on Multi30k stood at ~5 after 1.2 epochs and ~25-32 after 2.4-3 (docs/results/translator.md)
EPOCHS = 3
MEMBERS = (1, 4, 8)  # the classifier's ensembles, smallest first (8 is the default's)
TRANSLATORS = ("seq2seq-tiny", "seq2seq-budget")  # smallest first


@dataclass(frozen=True)
class Size:
    preset: str
    min_steps: int  # the steps from which it beats the size below it, trained with AdamW (the sweep)
    min_steps_muon: int  # the same with Muon: a Muon step learns more, so a larger size pays off sooner

    def needs(self, optimizer: str) -> int:
        """The steps this size needs to beat the size below it when trained with ``optimizer``."""
        return self.min_steps_muon if optimizer == "muon" else self.min_steps


# the generator's sizes, smallest first; the crossings measured (docs/results/generator.md). AdamW: baby-gpt
# lost to post-gpt at 1,019 steps (+0.178) and beat it at 2,097 (-0.007); small-gpt lost to baby-gpt at 991
# steps (+0.267) and tied at 3,110 (-0.004); each threshold is where the loss difference, interpolated in log
# steps, crosses zero. Muon (experiments/speedrun_ablation.py --steps N, seed 0): baby-gpt at 500 and 1,000
# steps (1.9011, 1.7361) against post-gpt at 1,500 and 3,000 (1.8577, 1.7729): the crossing falls at 725 to
# 890 steps, so 800. small-gpt in 5 minutes (884 steps, 1.6182) lost to baby-gpt in the same 5 minutes (1.5464)
# by 0.072, a quarter of AdamW's gap at that many steps: the crossing falls at 1,200 to 1,700 steps, so 1,500
SIZES = (Size("post-gpt", 0, 0), Size("baby-gpt", 2_000, 800), Size("small-gpt", 3_000, 1_500))
Needs = Callable[[Trainer], int]  # the steps a size needs to be worth it, from the trainer that trains it


def epochs_needed(trainer: Trainer) -> int:
    """``EPOCHS`` passes over the data (or the run's own --epochs, if fewer)."""
    return math.ceil(min(EPOCHS, trainer.config.epochs or EPOCHS) * trainer.steps_per_epoch)


def _swept(size: Size) -> Needs:
    return lambda trainer: size.needs(trainer.config.optimizer)


@dataclass(frozen=True)
class Choice:
    """What ``--preset auto`` chose: the recipe, the run the race began (``None``: trained from the start),
    and the race's table."""

    recipe: Recipe
    head: HeadStart | None = None
    race: tuple[dict[str, Any], ...] = ()


Chosen = tuple[Recipe, HeadStart | None, str]  # the recipe, the run the race began (None: none), and why


@dataclass(frozen=True)
class Plan:
    """How ``--preset auto`` chooses for one family: what its race ranks by, and the choosing."""

    score: Score
    choose: Callable[[Race, list[str], dict[str, Any]], Chosen]


def auto_choice(
    family: str,
    budget: Budget,
    model_overrides: Sequence[str] = (),
    settings: dict[str, Any] | None = None,
    log: Callable[[str], object] = print,
) -> Choice:
    """The ``family`` recipe ``--preset auto`` trains within ``budget`` (see the module): each candidate
    with the user's ``model_overrides`` (``--set``) and ``settings`` (the data files, ``--batch-size``, ...)
    applied, raced on the user's data."""
    if family not in PLANS:
        raise ConfigError(f"--preset auto chooses for the {', '.join(PLANS)}, not the {family}")
    settings = {**(settings or {}), "max_minutes": budget.minutes}
    race = Race([], PLANS[family].score, budget, budget.share(RACE_SHARE), log)
    log(
        f"--preset auto: choosing a {family} on this data by {race.score.metric} in at most {race.left():.0f} s of "
        f"the {budget.seconds:.0f} s budget ({budget.left():.0f} s left)"
    )
    recipe, head, why = PLANS[family].choose(race, list(model_overrides), settings)
    log(f"--preset auto: the race ({race.budget.spent() - race.began:.0f} s):\n{race.printed()}")
    log(f"--preset auto chose {why}")
    notes = f"--preset auto chose {why}; {recipe.notes}"
    return Choice(dataclasses.replace(recipe, notes=notes), head, tuple(race.table()))


# ----------------------------------------------------------------- the generator and the translator
def by_size(sizes: Sequence[tuple[str, Needs]]) -> Callable[[Race, list[str], dict[str, Any]], Chosen]:
    """Choosing among ``sizes`` (presets, smallest first, and the steps each needs): the largest whose minutes
    buy its steps (measured smallest first, on this data), then its learning rates raced; the winner goes on."""
    return lambda race, overrides, settings: _by_size(race, sizes, overrides, settings)


def _by_size(race: Race, sizes: Sequence[tuple[str, Needs]], overrides: list[str], settings: dict[str, Any]) -> Chosen:
    measure_s = race.left() * MEASURE_SHARE
    kept: Entrant | None = None
    measured = []
    for i, (preset, needed) in enumerate(sizes):
        if i and race.left() <= 0:  # reading its data could outlast the budget: the sizes measured decide
            measured.append(f"{preset} not measured: the race's time was spent")
            break
        entrant = Entrant(f"--preset {preset}", get_preset(preset).override(overrides, **settings))
        race.entrants.append(entrant)
        race.train(entrant, measure_s)
        gets, needs = _gets(entrant, race), needed(entrant.trainer)
        measured.append(
            f"{preset} {entrant.rate():.2f} steps/s"
            + (f" buys {gets:,} of the {needs:,} steps it needs" if needs else " (the smallest)")
        )
        if gets < needs and i:
            entrant.out = f"too slow: {entrant.rate():.2f} steps/s buy {gets:,} of the {needs:,} steps it needs"
            break
        if kept is not None:
            kept.out = f"smaller than {preset}, which gets the steps it needs"
        kept = entrant
        if gets < needs:  # the smallest, short of its steps: it trains as far as the minutes go
            break
    assert kept is not None
    race.entrants += rate_entrants(kept, "lr" in settings)
    winner = race.run()
    why = f"{winner.name} (size: {'; '.join(measured)}; then the best {race.score.metric} of the race)"
    return winner.recipe, winner.head, why


def _gets(entrant: Entrant, race: Race) -> int:
    """The steps ``entrant`` gets: what it trained, and what its speed buys in the time after the race,
    capped by its step limit."""
    gets = entrant.state.step + int(entrant.rate() * race.after())
    limit = entrant.trainer.total_steps
    return gets if limit is None else min(gets, limit)


def rate_entrants(kept: Entrant, lr_given: bool) -> list[Entrant]:
    """``kept`` at ``LR_FACTORS`` of its learning rate (both of Muon's with --optimizer muon), unless the user
    gave one."""
    if lr_given:
        return []
    train, out = kept.recipe.train, []
    for factor in LR_FACTORS:
        changed = {
            "lr": train.lr * factor,
            **({"muon_lr": train.muon_lr * factor} if train.optimizer == "muon" else {}),
        }
        name = kept.name + "".join(f" --{k.replace('_', '-')} {v:g}" for k, v in changed.items())
        out.append(Entrant(name, dataclasses.replace(kept.recipe, train=train.replace(**changed))))
    return out


# ----------------------------------------------------------------- the classifier
def _classifier(race: Race, overrides: list[str], settings: dict[str, Any]) -> Chosen:
    """One-member classifiers raced over the options the user left open (``classifier_entrants``); the
    winner's options then get the largest ensemble the minutes buy, unless the user set the members."""
    members_given = any(o.partition("=")[0].strip() == "members" for o in overrides)
    base = get_preset("classifier").override(overrides + ([] if members_given else ["members=1"]), **settings)
    race.entrants += classifier_entrants(base, settings)
    winner = race.run()
    if not winner.head:  # a race of one: trained a few seconds here, to measure its speed
        race.train(winner, race.left() * MEASURE_SHARE)
    if members_given:
        return winner.recipe, winner.head, f"{winner.name} (the best {race.score.metric} of the race)"
    members, sized = _members(winner, race.budget.left())
    recipe = winner.recipe.override([f"members={members}"])
    why = f"{winner.name} --set members={members} (the best {race.score.metric} of the race; {sized})"
    return recipe, winner.head if members == 1 else None, why


def classifier_entrants(base: Recipe, settings: dict[str, Any]) -> list[Entrant]:
    """The classifier's candidates: ``base``, with punctuation kept as words (``--word-split punct``), with
    balanced class weights when the training classes are imbalanced, and both; then ``base`` at
    ``LR_FACTORS`` of its learning rate; each axis only where the user's ``settings`` left it open."""
    options: list[dict[str, Any]] = [{}]
    if "word_split" not in settings:
        options += [{"word_split": "punct"}]
    if "class_weights" not in settings and _imbalanced(base):
        options += [{**o, "class_weights": "balanced"} for o in options]
    if "lr" not in settings:
        options += [{"lr": base.train.lr * factor} for factor in LR_FACTORS]
    return [Entrant(_named(option, base), base.override(**option)) for option in options]


def _members(winner: Entrant, left: float) -> tuple[int, str]:
    """The most members whose steps, at the one-member speed over their number, ``left`` seconds buy
    ``EPOCHS`` passes over the data (an ensemble's step costs its members' steps), and why."""
    rate, needs = winner.rate(), epochs_needed(winner.trainer)
    chosen = MEMBERS[0]
    for members in MEMBERS[1:]:
        if int(rate / members * left) >= needs:
            chosen = members
    buys = int(rate / chosen * left)
    return chosen, (
        f"{chosen} member{'s' if chosen > 1 else ''}: {rate:.2f} / {chosen} steps/s x {left:.0f} s = {buys:,} steps"
        + (f" >= the {needs:,} of {EPOCHS} epochs" if buys >= needs else f", short of the {needs:,} of {EPOCHS} epochs")
        + ("; the race's winner goes on" if chosen == 1 else "; trained from the start with the winner's options")
    )


def _imbalanced(recipe: Recipe) -> bool:
    """Whether the training split's largest class has ``IMBALANCED`` times the records of its smallest."""
    counts = np.bincount(np.asarray(read_splits(recipe.data, recipe.train.seed).train.labels, dtype=np.int64))
    counts = counts[counts > 0]
    return len(counts) > 1 and counts.max() >= IMBALANCED * counts.min()


def _named(option: dict[str, Any], base: Recipe) -> str:
    """A candidate by the options that make it, as a command would give them."""
    words = [
        f"--{k.replace('_', '-')} {v:g}" if isinstance(v, float) else f"--{k.replace('_', '-')} {v}"
        for k, v in option.items()
    ]
    return " ".join(words) or f"--preset {base.preset}"


# how each family's race ranks: the classifier by macro-F1 (what its runs keep), the others by validation
# bits per character, which compares models whatever their tokenizer (a translator's sizes learn their own BPEs)
PLANS = {
    "classifier": Plan(Score("val_macro_f1", higher=True), _classifier),
    "generator": Plan(Score("val_bits_per_char", higher=False), by_size([(s.preset, _swept(s)) for s in SIZES])),
    "seq2seq": Plan(Score("val_bits_per_char", higher=False), by_size([(p, epochs_needed) for p in TRANSLATORS])),
}

"""Recipes: the training defaults of each preset, beside its model config (``config.PRESETS``).

A ``Recipe`` is one frozen dataclass per preset: the trainer's settings (``TrainConfig``) and the
task's data settings (batch size, validation split, tokenizer, ...). The command line, the Python
API (``Experiment.from_preset``) and the benchmarks all start from it, so the defaults a user gets are
the ones measured; ``notes`` says what backs them. A flag or keyword overrides any field.

Limits: a recipe's ``epochs``/``max_steps``/``max_minutes`` apply only when the user gives none of
them; giving any one replaces the recipe's limits (``--max-minutes 4`` means four minutes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .config import PRESETS
from .errors import ConfigError
from .tasks import ClassifierSettings, GeneratorSettings, Seq2SeqSettings
from .training.settings import TrainConfig

Settings = Union[ClassifierSettings, GeneratorSettings, Seq2SeqSettings]
DEFAULT_PRESET = {"classifier": "classifier", "generator": "seed-gpt", "seq2seq": "seq2seq-small"}


@dataclass(frozen=True)
class Recipe:
    task: str
    train: TrainConfig
    data: Settings
    notes: str = ""


# tuned on the MARC dev split (README, benchmarks/bench_classifier.py)
_CLASSIFIER_TRAIN = TrainConfig(epochs=3, lr=4e-3, warmup_steps=200, weight_decay=0.1, eval_every=0)
# sized for about an hour on a 2-core CPU (18 epochs of ~160 s with seq2seq-small)
_SEQ2SEQ_TRAIN = TrainConfig(epochs=18, lr=1e-3, warmup_steps=300, weight_decay=0.01, eval_every=0)

RECIPES: dict[str, Recipe] = {
    "seed-classifier": Recipe("classifier", _CLASSIFIER_TRAIN, ClassifierSettings(embedding_init="random"),
                              "the classifier task's defaults with seed 000's random N(0, 1) embeddings"),
    "classifier": Recipe("classifier", _CLASSIFIER_TRAIN, ClassifierSettings(embedding_init="ppmi"),
                         "PPMI embeddings, 3 epochs, lr 4e-3: bash benchmarks/classifier_trials.sh DATA ppmi"),
    "seed-gpt": Recipe("generator", TrainConfig(epochs=1), GeneratorSettings()),
    "baby-gpt": Recipe("generator", TrainConfig(epochs=1), GeneratorSettings()),
    "seq2seq-small": Recipe("seq2seq", _SEQ2SEQ_TRAIN, Seq2SeqSettings(),
                            "18 epochs: validation loss is lowest around epoch 13, BLEU plateaus from epoch 7"),
    "seq2seq-tiny": Recipe("seq2seq", _SEQ2SEQ_TRAIN, Seq2SeqSettings()),
}


def get_recipe(preset: str) -> Recipe:
    """The named preset's recipe, or a ``ConfigError`` listing the known presets."""
    if preset not in RECIPES:
        raise ConfigError(f"unknown preset {preset!r}; known presets: {', '.join(sorted(RECIPES))}")
    return RECIPES[preset]


def check_registry() -> list[str]:
    """Problems with the preset tables (a test keeps this empty): every preset has a recipe of its family."""
    problems = [f"preset {name!r} has no recipe" for name in PRESETS if name not in RECIPES]
    problems += [f"recipe {name!r} has no preset" for name in RECIPES if name not in PRESETS]
    problems += [f"recipe {name!r} is for {r.task}, its preset is a {PRESETS[name].family}"
                 for name, r in RECIPES.items() if name in PRESETS and PRESETS[name].family != r.task]
    return problems

"""Recipes: the training defaults of each preset, beside its model config (``config.PRESETS``).

A ``Recipe`` is one frozen dataclass per preset: the trainer's settings (``TrainConfig``) and the
task's data settings (batch size, validation split, tokenizer, ...). The command line, the Python
API (``Experiment.from_preset``) and the benchmarks all start from it, so the defaults a user gets are
the ones measured; ``notes`` says what backs them. A flag or keyword overrides any field.

Limits: a recipe's ``epochs``/``max_steps``/``max_minutes`` apply only when the user gives none of
them; giving any one replaces the recipe's limits (``--max-minutes 4`` means four minutes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .config import PRESETS, Config, get_preset
from .errors import ConfigError
from .tasks import ClassifierSettings, GeneratorSettings, MaskedLMSettings, Seq2SeqSettings
from .training.settings import TrainConfig

Settings = ClassifierSettings | GeneratorSettings | Seq2SeqSettings | MaskedLMSettings
DEFAULT_PRESET = {"classifier": "classifier", "generator": "seed-gpt", "seq2seq": "seq2seq-small", "mlm": "mlm"}


@dataclass(frozen=True)
class Recipe:
    """``model`` holds model-config fields the recipe sets for training (for example dropout 0 for a
    small model that underfits within its budget); the preset's config itself stays as published."""

    task: str
    train: TrainConfig
    data: Settings
    notes: str = ""
    model: dict[str, Any] = field(default_factory=dict)


# tuned on the MARC dev split (README, benchmarks/bench_classifier.py)
_CLASSIFIER_TRAIN = TrainConfig(epochs=3, lr=4e-3, warmup_steps=200, weight_decay=0.1, eval_every=0)
# sized for about an hour on a 2-core CPU (18 epochs of ~160 s with seq2seq-small)
_SEQ2SEQ_TRAIN = TrainConfig(epochs=18, lr=1e-3, warmup_steps=300, weight_decay=0.01, eval_every=0)

# seed-gpt within a time budget (benchmarks/gpt_recipes.py seed-gpt): dropout 0.1 -> 0 at lr 1e-2 took 1-minute
# perplexity from 6.85 to 6.12 (the 44k-parameter model underfits a million characters: dropout only slows it);
# lr 1e-2 beat 1e-3 (8.63) and 2e-2 (6.22); 4-minute runs: cosine to 0 (5.52) beat a floor of 10 % (5.55)
_SEED_GPT_TRAIN = TrainConfig(
    lr=1e-2, min_lr_ratio=0.0, warmup_steps=100, weight_decay=0.01, max_minutes=4.0, eval_every=1000
)
_SEED_GPT_NOTES = (
    "dropout 0 (the seed's 0.1 only slows this underfitting model), lr 1e-2, cosine to 0 over the "
    "budget: benchmarks/gpt_recipes.py seed-gpt; result: benchmarks/bench_gpt.py quality"
)

RECIPES: dict[str, Recipe] = {
    "seed-classifier": Recipe(
        "classifier",
        _CLASSIFIER_TRAIN,
        ClassifierSettings(embedding_init="random"),
        "the classifier task's defaults with seed 000's random N(0, 1) embeddings",
    ),
    "classifier": Recipe(
        "classifier",
        _CLASSIFIER_TRAIN,
        ClassifierSettings(embedding_init="ppmi"),
        "PPMI embeddings, 3 epochs, lr 4e-3 (bash benchmarks/classifier_trials.sh DATA ppmi); the preset's word "
        "pairs and 8 members: bash benchmarks/classifier_trials.sh DATA ensemble",
    ),
    "seed-gpt": Recipe(
        "generator", _SEED_GPT_TRAIN, GeneratorSettings(batch_size=32), _SEED_GPT_NOTES, model={"dropout": 0.0}
    ),
    # at 3,000 steps (benchmarks/gpt_recipes.py baby-gpt --steps 3000): lr 2e-3 1.684, 1e-3 1.691, 2e-3 with beta2
    # 0.95 + weight decay 0.1 + cosine to 0 1.690, 3e-3 with GPT-2 initialisation 1.697; batch 24 and 8 lost at 1 min
    "baby-gpt": Recipe(
        "generator",
        TrainConfig(lr=2e-3, warmup_steps=100, weight_decay=0.01, max_minutes=2.0, eval_every=1000),
        GeneratorSettings(batch_size=12),
        "lr 2e-3, batch 12: benchmarks/gpt_recipes.py baby-gpt --steps 3000",
    ),
    # seed 004's data setup on the Complete Works: 95/5 split, 10 epochs of its definition (0.95 L / (64 x 32) steps)
    "complete-works": Recipe(
        "generator",
        _SEED_GPT_TRAIN.replace(max_minutes=None, epochs=10.0),
        GeneratorSettings(corpus="complete-works", batch_size=32, val_fraction=0.05),
        "seed-gpt's recipe on the plays of the Complete Works with seed 004's 95/5 split and 10 epochs",
        model={"dropout": 0.0},
    ),
    "seq2seq-small": Recipe(
        "seq2seq",
        _SEQ2SEQ_TRAIN,
        Seq2SeqSettings(),
        "18 epochs: validation loss is lowest around epoch 13, BLEU plateaus from epoch 7",
    ),
    "seq2seq-tiny": Recipe("seq2seq", _SEQ2SEQ_TRAIN, Seq2SeqSettings()),
    # bash benchmarks/mlm_trials.sh: a PPMI start beat random embeddings (5-star dev 0.4853 vs 0.4557 after
    # fine-tuning), 10 epochs matched 20 (0.4819) in half the time; none beat no pretraining (0.4880, README)
    "mlm": Recipe(
        "mlm",
        TrainConfig(epochs=10, lr=2e-3, warmup_steps=200, weight_decay=0.01, eval_every=0),
        MaskedLMSettings(embedding_init="ppmi"),
        "PPMI start, 10 epochs, lr 2e-3: bash benchmarks/mlm_trials.sh DATA mlm mlm-20 mlm-random",
    ),
}


# The posts' own training setups (``--recipe seed``): plain Adam (beta2 0.999, no weight decay) at a constant
# rate, no warmup and no gradient clipping, batch 32, one evaluation before training and one per epoch.
_SEED_ADAM = TrainConfig(
    lr=1e-3,
    weight_decay=0.0,
    beta2=0.999,
    schedule="constant",
    warmup_steps=0,
    grad_clip=0.0,
    epochs=10,
    eval_every=0,
    eval_at_start=True,
)
SEED_RECIPES: dict[str, Recipe] = {
    # seed 000: Adam() (lr 1e-3), 10 epochs of shuffled batches of 32, 10 % random validation split, train and
    # validation loss/accuracy after every epoch, N(0, 1) embeddings, reviews padded with the unknown word
    "classifier": Recipe(
        "classifier",
        _SEED_ADAM.replace(eval_train=True),
        ClassifierSettings(batch_size=32, val_fraction=0.1, embedding_init="random", padding="unk"),
        "seed 000's train!: Adam 1e-3 constant, batch 32, 10 epochs, padding with the unknown word",
    ),
    # seed 004: Adam(0.01), batch 32, the first 95 % for training, 10 epochs of 0.95 L / (64 x 32) steps
    "generator": Recipe(
        "generator",
        _SEED_ADAM.replace(lr=1e-2),
        GeneratorSettings(batch_size=32, val_fraction=0.05),
        "seed 004: Adam(0.01) constant, batch 32, 95/5 split, 10 epochs of 0.95 L / (n B) steps",
    ),
}
SEED_PRESET = {"classifier": "seed-classifier", "generator": "seed-gpt"}


def get_recipe(preset: str, task: str | None = None) -> Recipe:
    """The named preset's recipe, or (``"seed"``) the posts' own setup for ``task``; a ``ConfigError``
    lists the known names."""
    if preset == "seed":
        if task not in SEED_RECIPES:
            raise ConfigError(
                f"the posts give no training setup for the {task}; --recipe seed exists for: {', '.join(SEED_RECIPES)}"
            )
        return SEED_RECIPES[task]
    if preset not in RECIPES:
        raise ConfigError(f"unknown preset {preset!r}; known presets: {', '.join(sorted(RECIPES))}")
    return RECIPES[preset]


def training_model(preset: str) -> Config:
    """The preset's model config as its recipe trains it (with the recipe's ``model`` fields)."""
    return get_preset(preset).replace(**get_recipe(preset).model)


def check_registry() -> list[str]:
    """Problems with the preset tables (a test keeps this empty): every preset has a recipe of its family."""
    problems = [f"preset {name!r} has no recipe" for name in PRESETS if name not in RECIPES]
    problems += [f"recipe {name!r} has no preset" for name in RECIPES if name not in PRESETS]
    problems += [
        f"recipe {name!r} is for {r.task}, its preset is a {PRESETS[name].family}"
        for name, r in RECIPES.items()
        if name in PRESETS and PRESETS[name].family != r.task
    ]
    return problems

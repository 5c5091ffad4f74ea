"""The classifier's data settings (``tlite train classifier`` options): the table and its columns, the
classes and their weights, the validation split, the vocabulary, batching, how the embedding table
starts, and fine-tuning from a pretrained run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import validate
from ..data.reviews import parse_label_map
from ..errors import ConfigError
from ..settings import setting
from .embeddings import WordSettings


@dataclass(frozen=True)
class ClassifierSettings(WordSettings):
    train: str | None = setting(
        "training data: a table of texts and labels (.jsonl, .csv, .tsv, .json, .parquet, or a datasets folder)",
        None,
        none="required",
        path=True,
    )
    val: str | None = setting(
        "validation data, same shape", None, none="a random split of --train (by --seed)", path=True
    )
    text_column: str | None = setting(
        "the column holding the texts", None, none="text, review_body, review, sentence, comment, ... or the longest"
    )
    label_column: str | None = setting(
        "the column holding the labels", None, none="label, labels, stars, sentiment, class, category, ..."
    )
    labels: int | None = setting(
        "number of classes: for a 'stars' column 5 = stars, 2 = sentiment (3 stars dropped), 1 = sentiment with "
        "one logit; for other labels their number of classes, or 1 for two classes (one logit)",
        None,
        none="5 for stars, else the classes found",
    )
    label_map: str | None = setting(
        "class names in order ('neg,neu,pos'), or values mapped to classes ('1=neg,2=neg,3=,4=pos,5=pos'; an "
        "empty name drops the value)",
        None,
        none="every distinct label a class, sorted",
    )
    ordinal: bool | None = setting(
        "the classes are ordered: also score mean absolute error and off-by-one accuracy",
        None,
        none="yes for 5 stars",
    )
    batch_size: int = setting("records per batch", 32)
    val_fraction: float = setting("fraction of --train held out for validation when --val is not given", 0.1)
    stratify: bool = setting(
        "hold out --val-fraction of each class (at least one record of every class that has two or more), so "
        "validation holds the classes in their shares; --no-stratify: a plain random split",
        True,
        applies=("val", (None,)),
        absent=False,
    )
    class_weights: str | None = setting(
        "weight of each class in the cross-entropy: balanced (records / (classes x the class's records) on the "
        "training split, as scikit-learn's class_weight='balanced'), one weight per class in order ('1,2,5'), or "
        "by class name ('spam=3,ham=1'; a class not named weighs 1)",
        None,
        none="every class 1",
    )
    label_smoothing: float = setting("label smoothing of the cross-entropy", 0.0)
    padding: str = setting(
        "pad texts with a [PAD] token that attention ignores, or with the unknown word as the posts do "
        "(the model then reads padding as words)",
        "pad",
        choices=("pad", "unk"),
    )
    vectors: str | None = setting(
        "pretrained word vectors in GloVe's text format (a word and its numbers per line, as many numbers as "
        "the model's dim): the rows of the words it holds start from them, scaled to the table's spread",
        None,
        none="no vectors",
        path=True,
    )
    init_from: str | None = setting(
        "a pretrained run (tlite train mlm): the classifier takes its tokenizer, encoder shape and weights "
        "(embedding, blocks) and trains them with a new head; replaces embedding_init",
        None,
        none="no pretraining",
        path=True,
    )
    layer_lr_decay: float = setting(
        "learning-rate factor per layer below the head when fine-tuning: blocks get decay^(depth from the top), "
        "the embedding decay^(blocks + 1); 1 = one rate for all",
        1.0,
    )
    freeze_encoder_steps: int = setting(
        "steps at the start during which only the head learns (the pretrained encoder waits for it)", 0
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        validate.integer("labels", self.labels, optional=True)
        if self.label_map is not None:
            parse_label_map(self.label_map)
        validate.integer("batch_size", self.batch_size)
        validate.number("val_fraction", self.val_fraction, 0, 1, high_open=True)
        validate.number("label_smoothing", self.label_smoothing, 0, 1, high_open=True)
        validate.choice("padding", self.padding, ("pad", "unk"))
        if self.class_weights is not None:
            parse_class_weights(self.class_weights)
        validate.number("layer_lr_decay", self.layer_lr_decay, 0, 1, low_open=True)
        validate.integer("freeze_encoder_steps", self.freeze_encoder_steps, low=0)
        if self.init_from and self.vectors:
            raise ConfigError("--init-from brings its own embedding table: give --init-from or --vectors, not both")
        if self.init_from and self.padding != "pad":
            raise ConfigError("--init-from needs padding=pad: the pretrained encoder learned to ignore [PAD]")


def parse_class_weights(text: str) -> str | list[float] | dict[str, float]:
    """``--class-weights`` as written: ``"balanced"``, weights in class order, or ``{class name: weight}``;
    every weight a finite number > 0."""
    if text.strip() == "balanced":
        return "balanced"
    items = [item.strip() for item in str(text).split(",")]
    named = any("=" in item for item in items)
    out: dict[str, float] = {}
    for i, item in enumerate(items):
        name, _, value = item.rpartition("=") if named else (str(i), "", item)
        try:
            weight = float(value)
        except ValueError:
            weight = math.nan
        if not (named and "=" not in item) and math.isfinite(weight) and weight > 0 and name.strip():
            out[name.strip()] = weight
            continue
        raise ConfigError(
            f"class_weights {text!r}: {item!r} is no weight; write balanced, weights in class order ('1,2,5') or "
            "NAME=WEIGHT pairs ('spam=3,ham=1'), each weight a number > 0"
        )
    return out if named else list(out.values())


def class_weight_values(text: str, labels: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """One weight per class (``names``, in order) from ``--class-weights`` and the training ``labels``.

    ``balanced`` is scikit-learn's rule, ``n / (K * count)``: every class then weighs as much in the loss
    as if the classes were equally common (a class with no training record gets 0: it has nothing to weigh)."""
    parsed, k = parse_class_weights(text), len(names)
    if parsed == "balanced":
        counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=k).astype(float)
        return np.divide(len(labels), k * counts, out=np.zeros(k), where=counts > 0)
    if isinstance(parsed, list):
        if len(parsed) != k:
            raise ConfigError(
                f"--class-weights {text!r} gives {len(parsed)} weights for {k} classes ({', '.join(names)}); give one "
                "per class in that order, or NAME=WEIGHT pairs"
            )
        return np.asarray(parsed, dtype=float)
    assert isinstance(parsed, dict)  # "balanced" and a list are handled above
    unknown = sorted(set(parsed) - set(names))
    if unknown:
        raise ConfigError(
            f"--class-weights {text!r}: no class named {', '.join(map(repr, unknown))}; the classes are "
            f"{', '.join(names)}"
        )
    return np.asarray([parsed.get(name, 1.0) for name in names], dtype=float)

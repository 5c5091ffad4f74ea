"""Labelled texts for the classifier: reviews with stars (post 000, MARC) and any table of texts with labels.

A table (``data.tables``: CSV, TSV, JSON Lines, Parquet, a ``datasets`` folder) gives a text column and
a label column, chosen by name or found. Labels become class indices in one of two ways:

* **the star tasks** (MARC's special case, a label column named ``stars`` holding 1..5): 5 classes
  (stars - 1), or sentiment (1-2 stars -> negative, 4-5 -> positive, 3 stars dropped) as in post 000;
* **classes from the data**, for any other label column: strings or integers, each distinct value a
  class, in sorted order (numerically when every value is an integer; a ``datasets`` ClassLabel uses
  its own names). A label map (``"neg,pos"`` or ``"1=neg,2=neg,4=pos,5=pos,3="``) names and orders
  the classes, may merge values, and drops the values it maps to nothing.

Turning texts into ids is the tokenizer's job.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, DataError, warn
from ..tokenizers.text import drop_ignorable
from .inputs import json_kind
from .tables import LABEL_COLUMNS, TEXT_COLUMNS, pick_column, read_table

STARS = "stars"
STAR_NAMES = tuple(f"{k} star{'s' if k > 1 else ''}" for k in range(1, 6))
SENTIMENT_NAMES = ("negative", "positive")


@dataclass(frozen=True)
class Reviews:
    """Texts with the label column's values as read, where each record starts, and the columns used."""

    texts: list[str]
    values: list[Any]
    where: list[str]
    text_column: str = "review_body"
    label_column: str = STARS
    value_names: list[str] | None = None  # a datasets ClassLabel's names for integer values
    source: str = ""

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def stars(self) -> list[int]:
        """The values as star ratings 1..5 (an error naming the record for any other value)."""
        return [_star(v, w) for v, w in zip(self.values, self.where)]

    @property
    def is_stars(self) -> bool:
        """Whether these are star ratings: the MARC special case, a label column named ``stars``."""
        return self.label_column.lower() == STARS and self.value_names is None


def load_reviews(
    path: str | Path,
    *,
    text_column: str | None = None,
    label_column: str | None = None,
    usual: tuple[str | None, str | None] = (None, None),
    options: tuple[str, str] | None = None,
) -> Reviews:
    """Texts and labels of a table (see ``data.tables`` for the formats); the columns are the given
    ones, else the ``usual`` ones when the table has them (a run's own columns), else found
    (``text``/``review_body``/... and ``label``/``stars``/...). ``options`` are the command's options
    naming the two columns (``("--text-column", "--label-column")``), for its errors to point at; None
    where the command has none."""
    table = read_table(path)
    text_option, label_option = options or (None, None)
    text = pick_column(table, text_column, (*usual[:1], *TEXT_COLUMNS), "text", text_option)
    label = pick_column(table, label_column, (*usual[1:], *LABEL_COLUMNS), "labels", label_option)
    if text == label:
        raise ConfigError(f"{path}: the texts and the labels cannot both be column {text!r}")
    names = table.class_names.get(label)
    values = table.values(label)
    for value, where in zip(values, table.where):
        if isinstance(value, (list, dict)):  # one label per record: str(["books", "toys"]) is no class
            other = f", or choose another column with {label_option} (--label-map names and merges its values)"
            raise DataError(
                f"{where}: the {label!r} label is {json_kind(value)} ({json.dumps(value, default=str)[:60]}); a "
                f"classifier takes one label per record: keep one value per record{other if options else ''}"
            )
    return Reviews(table.texts(text), values, table.where, text, label, names, table.source)


def _star(value: Any, where: str) -> int:  # noqa: ANN401
    try:
        stars = int(str(value).strip())
    except ValueError:
        raise DataError(f"{where}: stars value {value!r} is not an integer 1..5") from None
    if not 1 <= stars <= 5:
        raise DataError(f"{where}: stars value {stars} is outside 1..5")
    return stars


def task_labels(stars: list[int], n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels for the 5-class (stars - 1) or binary task; returns ``(labels, kept_indices)``.

    Binary (``n_labels`` 1 or 2) maps 1-2 stars to 0 and 4-5 to 1 and drops 3 stars, as in post 000.
    """
    s = np.asarray(stars)
    if n_labels == 5:
        return s - 1, np.arange(len(s))
    if n_labels in (1, 2):
        keep = np.flatnonzero(s != 3)
        return (s[keep] >= 4).astype(np.int64), keep
    raise ConfigError(
        f"star ratings make 5 classes (--labels 5) or sentiment (--labels 2 or 1), got --labels {n_labels}"
    )


def value_name(value: Any, names: list[str] | None = None) -> str:  # noqa: ANN401
    """A label value as a class name: strings stripped, in Unicode's composed form (NFC) and without
    invisible characters (so "pos\\u200b" and "pos" are one class, as they look), integral numbers without
    ``.0``, a ClassLabel's name."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if names is not None and isinstance(value, int) and 0 <= value < len(names):
        return names[value]
    return _clean(str(value))


def _clean(text: str) -> str:
    return unicodedata.normalize("NFC", drop_ignorable(text)).strip()


def parse_label_map(text: str) -> dict[str, str]:
    """``"neg,pos"`` or ``"1=neg,2=neg,3=,4=pos"`` as ``{value: class name}`` in the order given
    (an empty name drops the records with that value)."""
    out: dict[str, str] = {}
    for item in text.split(","):
        value, _, name = item.partition("=") if "=" in item else (item, "=", item)
        value, name = _clean(value), _clean(name)
        if not value:
            raise ConfigError(
                f"label_map {text!r}: an empty value in {item!r}; write VALUE=NAME or NAME, comma-separated"
            )
        if value in out:
            raise ConfigError(f"label_map {text!r}: the value {value!r} is mapped twice")
        out[value] = name
    return out


def class_names_of(reviews: Reviews, label_map: str | None = None) -> tuple[str, ...]:
    """The classes of labels taken from the data: the label map's names in its order, else every
    distinct value, integers in numeric order and other values sorted."""
    if label_map:
        return tuple(dict.fromkeys(n for n in parse_label_map(label_map).values() if n))
    found = {value_name(v, reviews.value_names) for v in reviews.values}
    if reviews.value_names is not None:
        return tuple(n for n in reviews.value_names if n in found)
    if all(_is_number(n) for n in found):
        return tuple(sorted(found, key=float))  # "2.5" before "10": the numbers' order, not the texts'
    return tuple(sorted(found))


def has_order(reviews: Reviews, label_map: str | None = None) -> bool:
    """Whether the classes ``class_names_of`` gives have an order a user can mean: star ratings, numbers,
    a ``datasets`` ClassLabel's names, or a label map's names (in the map's order). Names sorted only
    alphabetically ("books", "music", "toys") have none."""
    if label_map or reviews.value_names is not None or reviews.is_stars:
        return True
    return all(_is_number(value_name(v)) for v in reviews.values)


def class_indices(
    reviews: Reviews, names: tuple[str, ...], label_map: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, kept_indices)`` for classes ``names``: each value's class index; records the label
    map maps to nothing are left out; a value that is no class is an error naming the record."""
    mapping = parse_label_map(label_map) if label_map else {n: n for n in names}
    index = {n: i for i, n in enumerate(names)}
    labels, kept = [], []
    for i, (value, where) in enumerate(zip(reviews.values, reviews.where)):
        name = value_name(value, reviews.value_names)
        if name not in mapping:
            shown = ", ".join(list(mapping)[:12])
            what = f"a value the label map {label_map!r} maps" if label_map else "one of the classes"
            raise DataError(f"{where}: label {name!r} is not {what} ({shown})")
        if mapping[name]:
            labels.append(index[mapping[name]])
            kept.append(i)
    return np.asarray(labels, dtype=np.int64), np.asarray(kept, dtype=np.int64)


def choose_classes(reviews: Reviews, labels: int | None, label_map: str | None) -> tuple[int, tuple[str, ...]]:
    """``(n_labels, class names)`` of a new run: the star tasks (no names; ``labels`` 5, 2 or 1, default
    5) for a ``stars`` column without a label map, else the classes of the data (``labels`` may be left
    out, be their number, or be 1 for two classes: one logit)."""
    if reviews.is_stars and not label_map:
        n = 5 if labels is None else labels
        if n not in (1, 2, 5):
            raise ConfigError(
                f"star ratings make 5 classes (--labels 5) or sentiment (--labels 2 or 1), got --labels {n}"
            )
        return n, ()
    names = class_names_of(reviews, label_map)
    column = f"{reviews.source}: column {reviews.label_column!r}"
    if label_map:
        _check_label_map(reviews, label_map, column)
    if len(names) < 2:
        raise DataError(f"{column} holds one class only ({', '.join(names)}); a classifier needs two or more")
    if labels is None or labels == len(names):
        return len(names), names
    if labels == 1 and len(names) == 2:
        return 1, names
    raise ConfigError(
        f"--labels {labels}, but {column} holds {len(names)} classes ({', '.join(names[:12])}); leave --labels out "
        "to use them, or merge classes with --label-map"
    )


def _check_label_map(reviews: Reviews, label_map: str, column: str) -> None:
    """An error naming what ``label_map`` keeps of the records, when it keeps fewer than two classes, and
    the values of the map that match no label of the column (a typo: an error when the map leaves
    labels out, else a warning)."""
    mapping = parse_label_map(label_map)
    found = Counter(value_name(v, reviews.value_names) for v in reviews.values)
    values = ", ".join(f"{v!r} ({n})" for v, n in found.most_common(12))
    unmatched = [value for value in mapping if value not in found]
    no_label = f"{', '.join(map(repr, unmatched))} {'matches' if len(unmatched) == 1 else 'match'} no label"
    kept = Counter({mapping[v]: 0 for v in mapping if mapping[v]})
    for value, n in found.items():
        if mapping.get(value):
            kept[mapping[value]] += n
    if sum(1 for n in kept.values() if n) < 2:
        what = ", ".join(f"{name!r} ({n} records)" for name, n in kept.items()) or "no class"
        raise DataError(
            f"--label-map {label_map!r} keeps {what} of {len(reviews)} records in {column}, whose values are "
            f"{values}{'; ' + no_label if unmatched else ''}; a classifier needs two classes with records: map "
            "the values to two names or more (VALUE=NAME)"
        )
    if not unmatched:
        return
    said = f"--label-map {label_map!r}: {no_label} of {column} ({values})"
    unmapped = sorted(v for v in found if v not in mapping)
    if unmapped:  # a value spelled otherwise than the column spells it: its records could not be classed
        raise DataError(
            f"{said}, and the map leaves out {', '.join(map(repr, unmapped[:6]))}; write each value as the "
            "column holds it (an empty name drops a value's records: 'VALUE=')"
        )
    warn(f"{said}; no record has it")


def encode_labels(
    reviews: Reviews, n_labels: int, names: tuple[str, ...], label_map: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, kept_indices)`` of a run's classes: the star tasks when ``names`` is empty, else the
    named classes (see ``class_indices``)."""
    if not names:
        return task_labels(reviews.stars, n_labels)
    return class_indices(reviews, names, label_map)


def left_out(reviews: Reviews, kept: np.ndarray, what: str) -> str:
    """A phrase counting the records of ``reviews`` not in ``kept`` (their label is no class: a value
    the label map maps to nothing, 3 stars in the sentiment task) by value, or ``""`` when none is."""
    keep = set(kept.tolist())
    counts = Counter(value_name(v, reviews.value_names) for i, v in enumerate(reviews.values) if i not in keep)
    if not counts:
        return ""
    shown = ", ".join(f"{v!r}: {n}" for v, n in counts.most_common(6)) + (", ..." if len(counts) > 6 else "")
    records = f"{what} records" if what else "records"
    return f"left out {sum(counts.values())} of {len(reviews)} {records} whose label is no class ({shown})"


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False

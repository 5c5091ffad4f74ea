"""Amazon review corpus (MARC) for the star classifier of post 000.

Loads JSON Lines (full MARC records; ``stars`` as "1".."5" or ints) and CSV (configurable columns,
with or without a header); maps stars to the 5-class (0..4) or binary task (1-2 -> 0, 4-5 -> 1,
3 dropped); and splits off a validation set at random (given a random seed). Turning the texts into
ids is the tokenizer's job (``WordTokenizer.encode_batch``, vectorised for whole corpora).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError
from .inputs import json_kind
from .sources import read_text_file


@dataclass(frozen=True)
class Reviews:
    texts: list[str]
    stars: list[int]

    def __len__(self) -> int:
        return len(self.texts)


def _parse_stars(value: object, where: str) -> int:
    try:
        stars = int(str(value).strip())
    except ValueError:
        raise DataError(f"{where}: stars value {value!r} is not an integer 1..5") from None
    if not 1 <= stars <= 5:
        raise DataError(f"{where}: stars value {stars} is outside 1..5")
    return stars


def load_reviews(
    path: str | Path, *, text_field: str = "review_body", label_field: str = "stars", header: bool = True
) -> Reviews:
    """Read reviews from ``.jsonl`` (one JSON object per line) or ``.csv``.

    For CSV without a header, ``text_field``/``label_field`` are column indices ("0", "1", ...).
    Every problem (missing field, bad stars, empty text, bad bytes) is a ``ValueError`` naming the
    file and line.
    """
    path = Path(path)
    text = read_text_file(path)  # UTF-8, byte-order mark and Windows line endings removed
    texts: list[str] = []
    stars: list[int] = []
    if path.suffix.lower() == ".csv":
        _read_csv(path, text, text_field, label_field, header, texts, stars)
    else:
        # split on "\n" only: str.splitlines would also cut at U+2028 and friends inside JSON strings
        for lineno, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{where}: invalid JSON ({err.msg} at column {err.colno})") from None
            if not isinstance(record, dict):
                raise DataError(f"{where}: each line must be a JSON object with {text_field!r} and {label_field!r}")
            for field in (text_field, label_field):
                if field not in record:
                    raise DataError(f"{where}: missing field {field!r}")
            _append(texts, stars, record[text_field], record[label_field], where)
    if not texts:
        raise DataError(f"{path}: no reviews found")
    return Reviews(texts, stars)


def _read_csv(
    path: Path, text: str, text_field: str, label_field: str, header: bool, texts: list[str], stars: list[int]
) -> None:
    """CSV records (a quoted field may span lines); errors name the line where the record starts."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        names: list[str] | None = next(reader, None) if header else None
        if header and names is None:
            raise DataError(f"{path}: the file is empty")

        def column(field: str) -> int:
            if names is None:
                if not field.isdigit():
                    raise DataError(f"{path}: without a header, columns are indices; got {field!r}")
                return int(field)
            if field not in names:
                raise DataError(f"{path}: no column {field!r}; columns are {names}")
            return names.index(field)

        ti, li = column(text_field), column(label_field)
        start = reader.line_num + 1
        for row in reader:
            where = f"{path}:{start}"
            start = reader.line_num + 1
            if not row:
                continue
            if max(ti, li) >= len(row):
                raise DataError(f"{where}: row has {len(row)} columns, needs column {max(ti, li)}")
            _append(texts, stars, row[ti], row[li], where)
    except csv.Error as err:
        raise DataError(f"{path}:{reader.line_num}: malformed CSV ({err})") from None


def _append(texts: list[str], stars: list[int], text: object, label: object, where: str) -> None:
    if not isinstance(text, str):
        raise DataError(f"{where}: the review text is {json_kind(text)} ({json.dumps(text)[:40]}), not a string")
    if not text.strip():
        raise DataError(f"{where}: empty review text; remove the record or give it a text")
    texts.append(text)
    stars.append(_parse_stars(label, where))


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
    raise ValueError(f"n_labels must be 5 (stars) or 2 (binary sentiment), got {n_labels}")


def split_validation(n: int, frac: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random split of ``range(n)`` into ``(train_indices, val_indices)``; val gets floor(frac·n)."""
    if not 0.0 <= frac < 1.0:
        raise ValueError(f"validation fraction must be in [0, 1), got {frac}")
    order = np.random.default_rng(seed).permutation(n)
    n_val = int(np.floor(frac * n))
    return order[: n - n_val], order[n - n_val :]

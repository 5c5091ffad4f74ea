"""Parallel corpora (Multi30k German->English, or a user's pairs): loading, length filtering,
length-bucketed batches.

Pairs come as two aligned line files (one sentence per line), or as one table (``data.tables``: TSV,
CSV, JSON Lines, JSON, Parquet, a ``datasets`` folder) with a source and a target column, or with a
``translation`` column of ``{language: sentence}`` objects as Hugging Face translation datasets hold.

Shapes: B sentence pairs, S source length, T target length (with BOS or EOS added).
A batch holds ``src (B, S)``, ``src_valid``, ``tgt_in (B, T)`` = BOS + target, ``tgt_out (B, T)`` =
target + EOS, and ``tgt_valid``; the decoder learns to predict ``tgt_out`` from ``tgt_in``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from torch import Tensor

from ..errors import ConfigError, DataError, warn
from ..tokenizers import pad_batch
from .formats import decode, hint, read_bytes, read_text
from .inputs import json_kind
from .tables import is_sentence, is_table, read_table

SOURCE_COLUMNS, TARGET_COLUMNS = ("src", "source"), ("tgt", "target")


@dataclass(frozen=True)
class Pairs:
    """Aligned source and target sentences and the names of their languages (columns or file suffixes)."""

    src: list[str]
    tgt: list[str]
    languages: tuple[str, str] = ("source", "target")


def load_pairs(
    src_path: str | Path, tgt_path: str | Path | None = None, columns: tuple[str | None, str | None] = (None, None)
) -> Pairs:
    """Two aligned line files, or (``tgt_path`` None) a table of pairs read by ``columns`` (the source and
    target column names, or language keys of a ``translation`` column; found when None)."""
    if tgt_path is not None:
        if Path(src_path).resolve() == Path(tgt_path).resolve():
            warn(f"{src_path} is both the source and the target file: every target is its own source (copying)")
        src, tgt = load_parallel(src_path, tgt_path)
        return Pairs(src, tgt, (_language(src_path, "source"), _language(tgt_path, "target")))
    content = None if Path(src_path).is_dir() else read_text(src_path)
    if content is not None and (content[1] == "text" or (content[1] in ("csv", "tsv") and not is_table(src_path))):
        raise ConfigError(
            f"{src_path} holds one side of the pairs: give the target sentences too (--train-tgt/--val-tgt), or "
            "one table of pairs (.tsv, .csv, .jsonl, .json, .parquet, or a datasets folder)"
        )
    table = read_table(src_path, content)
    rows = table.rows
    if "translation" in table.columns and all(isinstance(r.get("translation"), dict) for r in rows):
        keys = list(rows[0]["translation"])
        a, b = columns[0] or (keys[0] if len(keys) == 2 else None), columns[1] or (keys[1] if len(keys) == 2 else None)
        if a is None or b is None:
            raise ConfigError(
                f"{src_path}: the translations hold {keys}; name the languages with --src-column/--tgt-column"
            )
        rows = [r["translation"] for r in rows]
        choices = keys
    else:
        choices = table.columns
        text_columns = [c for c in table.columns if all(isinstance(r.get(c), str) for r in rows)]
        a = columns[0] or next((c for c in table.columns if c.lower() in SOURCE_COLUMNS), None)
        b = columns[1] or next((c for c in table.columns if c.lower() in TARGET_COLUMNS), None)
        if (a, b) == (None, None) and len(text_columns) == 2:
            a, b = text_columns  # two text columns: the source first, as a TSV of pairs is written
        headless = bool(table.kind) and any(is_sentence(c) for c in text_columns)
        if (a, b) == tuple(text_columns) and columns == (None, None) and headless:
            warn(
                f"{src_path}: line 1 reads like a pair, not a header naming the columns; it was taken as the "
                f"header ({a!r}, {b!r}) and is not trained on: add a header line, e.g. 'source<TAB>target'"
            )
        if a is None or b is None:
            raise ConfigError(
                f"{src_path}: which columns hold the source and the target? columns are {table.columns}; "
                "pass --src-column and --tgt-column"
            )
    if a == b:
        raise ConfigError(
            f"{src_path}: the source and the target are both {a!r}; a pair takes two columns (or languages): "
            f"name the other with --src-column or --tgt-column (it holds {', '.join(map(repr, choices))})"
        )
    sides = []
    for column in (a, b):
        side = []
        for row, where in zip(rows, table.where):
            value = row.get(column)
            if not isinstance(value, str):
                found = "has no such field" if column not in row else f"holds {json_kind(value)}, not a sentence"
                raise DataError(f"{where}: the {column!r} sentence {found} (fields: {', '.join(map(repr, row))})")
            side.append(value.strip())
        sides.append(side)
    return Pairs(sides[0], sides[1], (a, b))


def _language(path: str | Path, default: str) -> str:
    """The language a line file names by its suffix (``train.de.gz`` -> ``de``), else ``default``."""
    suffix = hint(path)[1:]
    return suffix if suffix.isalpha() and len(suffix) <= 3 else default


def load_parallel(src_path: str | Path, tgt_path: str | Path) -> tuple[list[str], list[str]]:
    """Aligned line files (plain or compressed); a clear error when their line counts differ."""
    src, tgt = sentence_lines(src_path), sentence_lines(tgt_path)
    if len(src) != len(tgt):
        raise ValueError(
            f"parallel files differ in length: {src_path} has {len(src)} lines, {tgt_path} has {len(tgt)} lines"
        )
    return [s.strip() for s in src], [t.strip() for t in tgt]


def sentence_lines(path: str | Path) -> list[str]:
    """The lines of a file of sentences, one per line: only ``\\n`` (or ``\\r\\n``) ends a line, so the two
    files stay aligned; a lone carriage return inside a line is read as a space, and said (its line named).
    A file whose lines all end with a lone ``\\r`` (old Mac) is an error saying so."""
    raw = read_bytes(path)
    if not raw.strip():
        raise DataError(f"{path}: the file is empty")
    whole = decode(raw, path).replace("\r\n", "\n")
    text = whole.rstrip("\n")
    if "\r" in whole.rstrip("\r") and "\n" not in whole:
        raise DataError(
            f"{path}: lines end with a carriage return only (old Mac line endings); convert them to \\n first "
            "(e.g. tr '\\r' '\\n')"
        )
    lines = text.split("\n")
    inside = [number for number, line in enumerate(lines, 1) if "\r" in line.rstrip("\r")]
    if inside:
        shown = ", ".join(map(str, inside[:5])) + (", ..." if len(inside) > 5 else "")
        warn(
            f"{path}: {len(inside)} line(s) hold a carriage return (\\r, U+000D) inside the line (line {shown}); "
            "each was read as a space, not as the end of a line"
        )
    return [line.replace("\r", " ") for line in lines]


def filter_by_length(
    src: list[list[int]], tgt: list[list[int]], max_length: int, min_length: int = 1
) -> tuple[list[list[int]], list[list[int]]]:
    """Drop pairs where either side is shorter than ``min_length`` or longer than ``max_length`` ids."""
    keep = [
        i
        for i, (s, t) in enumerate(zip(src, tgt))
        if min_length <= len(s) <= max_length and min_length <= len(t) <= max_length
    ]
    return [src[i] for i in keep], [tgt[i] for i in keep]


@dataclass
class TranslationBatch:
    src: Tensor
    src_valid: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    tgt_valid: Tensor

    def to(self, device) -> TranslationBatch:  # noqa: ANN001
        return TranslationBatch(
            *(getattr(self, f).to(device) for f in ("src", "src_valid", "tgt_in", "tgt_out", "tgt_valid"))
        )


def make_batch(
    src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]], pad_id: int, bos_id: int, eos_id: int
) -> TranslationBatch:
    src_ids, src_valid = pad_batch(src, pad_id)
    tgt_in, tgt_valid = pad_batch([[bos_id, *t] for t in tgt], pad_id)
    tgt_out, _ = pad_batch([[*t, eos_id] for t in tgt], pad_id)
    return TranslationBatch(src_ids, src_valid, tgt_in, tgt_out, tgt_valid)


def bucket_batches(
    src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]], max_tokens: int, *, seed: int | None = 0
) -> list[list[int]]:
    """Group pair indices of similar length into batches of at most ``max_tokens`` (padded) tokens.

    Pairs are sorted by length (with a seeded shuffle inside equal lengths), cut into batches, and
    the batch order is shuffled with ``seed`` (``None`` keeps the sorted order, for evaluation).
    """
    rng = np.random.default_rng(seed)
    lengths = np.array([max(len(s), len(t)) + 1 for s, t in zip(src, tgt)])
    jitter = rng.random(len(lengths)) if seed is not None else np.zeros(len(lengths))
    order = np.lexsort((jitter, lengths))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        longest_new = max(longest, lengths[i])
        if current and longest_new * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest_new = [], lengths[i]
        current.append(int(i))
        longest = longest_new
    if current:
        batches.append(current)
    if seed is not None:
        rng.shuffle(batches)
    return batches

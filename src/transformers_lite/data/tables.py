"""Tables of records, whatever shape a user's data comes in: CSV, TSV, JSON Lines, a JSON list of
objects, Parquet, or a Hugging Face ``datasets`` folder written by ``save_to_disk``.

One reader for every command that takes records (training a classifier or a translator from pairs,
``tlite classify --input``, ``tlite evaluate --data``), so a header is never read as a record and a
quoted field that spans lines stays one record. Every record keeps where it starts (``file:line``, or
``file:row N`` for Parquet and datasets) so that errors name it.

Columns are chosen by name, or found: the first of a list of usual names (``text``, ``review_body``,
``label``, ``stars``, ...), else, for a text, the column whose values are the longest strings. A
validation split of records is seeded (``split_validation``).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError
from ..optional import need
from .inputs import json_kind, parse_json
from .sources import read_text_file

TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")
TEXT_COLUMNS = ("text", "review_body", "review", "sentence", "comment", "content", "body", "document", "message")
LABEL_COLUMNS = ("label", "labels", "stars", "sentiment", "class", "category", "target", "rating", "topic")


@dataclass(frozen=True)
class Table:
    """Records as dicts, the column names in file order, and where each record starts."""

    source: str
    columns: list[str]
    rows: list[dict[str, Any]]
    where: list[str]
    class_names: dict[str, list[str]]  # a datasets ClassLabel column's names, by column

    def __len__(self) -> int:
        return len(self.rows)

    def texts(self, column: str) -> list[str]:
        """The column's values, each a non-empty string (else an error naming the record)."""
        out = []
        for row, where in zip(self.rows, self.where):
            value = row.get(column)
            if not isinstance(value, str):
                shown = json.dumps(value, default=str)[:40]
                raise DataError(f"{where}: the {column!r} value is {json_kind(value)} ({shown}), not a text")
            if not value.strip():
                raise DataError(f"{where}: empty {column!r} text; remove the record or give it a text")
            out.append(value)
        return out

    def values(self, column: str) -> list[Any]:
        """The column's values as read (a missing or empty value is an error naming the record)."""
        out = []
        for row, where in zip(self.rows, self.where):
            value = row.get(column)
            if value is None or (isinstance(value, str) and not value.strip()):
                raise DataError(f"{where}: no {column!r} value")
            out.append(value)
        return out


def is_table(path: str | Path) -> bool:
    """Whether ``path`` is read as a table of records (by its suffix, or a ``datasets`` folder)."""
    p = Path(path)
    return p.suffix.lower() in TABLE_SUFFIXES or p.is_dir()


def read_table(path: str | Path) -> Table:
    """Every record of ``path``: see the module docstring for the formats. A file with no record is an error."""
    p = Path(path)
    if p.is_dir():
        table = _read_dataset(p)
    elif not p.exists():
        raise FileNotFoundError(f"file not found: {p}")
    elif p.suffix.lower() == ".parquet":
        pq = need("pyarrow.parquet", "data", "reading Parquet files")
        try:
            records = pq.read_table(p).to_pylist()
        except Exception as err:  # noqa: BLE001 - pyarrow raises its own types for damaged files
            raise DataError(f"{p}: not a readable Parquet file ({err})") from None
        table = _from_records(str(p), records, [f"{p}:row {i}" for i in range(1, len(records) + 1)])
    else:
        text = read_text_file(p)  # UTF-8, byte-order mark and Windows line endings removed
        suffix = p.suffix.lower()
        if suffix in (".csv", ".tsv"):
            table = _read_delimited(p, text, "\t" if suffix == ".tsv" else ",")
        elif suffix == ".json" and text.lstrip().startswith("["):
            table = _read_json_list(p, text)
        else:
            table = _read_jsonl(p, text)
    if not table.rows:
        raise DataError(f"{p}: no records found")
    return table


def pick_column(table: Table, given: str | None, known: tuple[str | None, ...], what: str, option: str) -> str:
    """The column named ``given``, else the first of ``known`` present (case-insensitive), else (for
    texts) the column of the longest strings; an error listing the columns when none fits."""
    if given is not None:
        if given not in table.columns:
            raise DataError(f"{table.source}: no column {given!r}; columns are {table.columns} ({option})")
        return given
    lower = {c.lower(): c for c in table.columns}
    for name in known:
        if name is not None and name.lower() in lower:
            return lower[name.lower()]
    if what == "text":  # the column of the longest strings that are not all numbers
        rows = table.rows[:1000]
        lengths = {
            c: sum(len(r[c]) for r in rows) / len(rows)
            for c in table.columns
            if all(isinstance(r.get(c), str) for r in rows) and not all(_is_number(r[c]) for r in rows)
        }
        if lengths:
            return max(lengths, key=lambda c: lengths[c])
    raise DataError(f"{table.source}: which column holds the {what}? columns are {table.columns}; pass {option}")


def is_sentence(name: str) -> bool:
    """A column name that reads like a record (three words or more, a sentence's end, or long): a file
    without a header whose first record was taken as one. "Review Text" is a header."""
    text = name.strip()
    return len(text.split()) >= 3 or text.endswith((".", "!", "?")) or len(text) > 30


def has_header_line(path: str | Path) -> bool:
    """A delimited text table (CSV or TSV, compressed or not), whose first line names its columns: only
    there can a record have been taken for the header."""
    name = str(path).lower().removesuffix(".gz")
    return name.endswith((".csv", ".tsv"))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _from_records(source: str, records: list[Any], where: list[str]) -> Table:
    columns: dict[str, None] = {}
    for record, place in zip(records, where):
        if not isinstance(record, dict):
            raise DataError(f"{place}: {json_kind(record)}, not a record; give one JSON object per record")
        columns.update(dict.fromkeys(record))
    return Table(source, list(columns), records, where, {})


def _read_jsonl(path: Path, text: str) -> Table:
    records, where = [], []
    # split on "\n" only: str.splitlines would also cut at U+2028 and friends inside JSON strings
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        records.append(parse_json(line, f"{path}:{lineno}"))
        where.append(f"{path}:{lineno}")
    return _from_records(str(path), records, where)


def _read_json_list(path: Path, text: str) -> Table:
    records = parse_json(text, str(path))
    if not isinstance(records, list):
        raise DataError(f"{path}: a JSON file holds a list of objects (or use JSON Lines, one object per line)")
    return _from_records(str(path), records, [f"{path}: record {i}" for i in range(1, len(records) + 1)])


def _read_delimited(path: Path, text: str, delimiter: str) -> Table:
    """Records of a CSV/TSV file with a header (a quoted field may span lines)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows, where = [], []
    try:
        names = next(reader, None)
        if not names:
            raise DataError(f"{path}: the file is empty; the first line names the columns")
        if len(set(names)) != len(names):
            raise DataError(f"{path}:1: the header repeats a column name: {names}")
        start = reader.line_num + 1
        for row in reader:
            place, start = f"{path}:{start}", reader.line_num + 1
            if not row or row == [""]:
                continue
            if len(row) != len(names):
                raise DataError(
                    f"{place}: {len(row)} fields where the header has {len(names)} ({names}); quote fields that "
                    "hold the delimiter"
                )
            rows.append(dict(zip(names, row)))
            where.append(place)
    except csv.Error as err:
        raise DataError(
            f"{path}:{reader.line_num}: malformed {'TSV' if delimiter == chr(9) else 'CSV'} ({err})"
        ) from None
    return Table(str(path), names, rows, where, {})


def _read_dataset(path: Path) -> Table:
    """A ``datasets`` folder (``Dataset.save_to_disk``); a ``DatasetDict``'s splits are its subfolders."""
    if not (path / "dataset_info.json").exists() and not (path / "state.json").exists():
        splits = sorted(p.name for p in path.iterdir() if (p / "state.json").exists())
        if splits:
            raise DataError(f"{path} holds the splits {splits}: give one of them, e.g. {path / splits[0]}")
        raise DataError(f"{path} is a folder but not a dataset saved with datasets' save_to_disk")
    datasets = need("datasets", "data", "reading a Hugging Face datasets folder")
    try:
        dataset = datasets.load_from_disk(str(path))
    except Exception as err:  # noqa: BLE001 - datasets raises many types for a damaged folder
        raise DataError(f"{path}: cannot be loaded as a dataset ({err})") from None
    if isinstance(dataset, datasets.DatasetDict):
        raise DataError(f"{path} holds the splits {list(dataset)}: give one of them, e.g. {path / next(iter(dataset))}")
    names = {
        column: list(feature.names)
        for column, feature in dataset.features.items()
        if isinstance(feature, datasets.ClassLabel)
    }
    records = dataset.to_list()
    table = _from_records(str(path), records, [f"{path}:row {i}" for i in range(1, len(records) + 1)])
    return Table(table.source, list(dataset.column_names), table.rows, table.where, names)


def split_validation(n: int, frac: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random split of ``range(n)`` into ``(train_indices, val_indices)``; val gets floor(frac·n)."""
    if not 0.0 <= frac < 1.0:
        raise ValueError(f"validation fraction must be in [0, 1), got {frac}")
    order = np.random.default_rng(seed).permutation(n)
    n_val = int(np.floor(frac * n))
    return order[: n - n_val], order[n - n_val :]

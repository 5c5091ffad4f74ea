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

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, warn
from ..optional import need
from .formats import check_file, csv_records, hint, read_text, sniff, tsv_is_quoted
from .inputs import json_kind, parse_json

_SEPARATOR = {"csv": "comma", "tsv": "tab"}
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
    kind: str = ""  # "csv" or "tsv" for a delimited text, whose line 1 was read as the header

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
        """The column's values as read (a missing or empty value is an error naming the record, as is a
        NaN or an infinity: Python's JSON reads them, but they are no value, and ``str`` made a class "nan")."""
        out = []
        for row, where in zip(self.rows, self.where):
            value = row.get(column)
            if value is None or (isinstance(value, str) and not value.strip()):
                raise DataError(f"{where}: no {column!r} value")
            if isinstance(value, float) and not math.isfinite(value):
                raise DataError(
                    f"{where}: the {column!r} value is {json.dumps(value)}, which is no value (a missing one?); "
                    "give the record its value, or leave it out"
                )
            out.append(value)
        return out


def is_table(path: str | Path) -> bool:
    """Whether ``path`` names a table of records (by its suffix, compressed or not, or a ``datasets``
    folder); what it holds is decided by its content when it is read (``formats``)."""
    p = Path(path)
    return hint(p) in TABLE_SUFFIXES or p.is_dir()


def looks_like_a_table(path: str | Path) -> bool:
    """Whether ``path`` holds a table of records rather than lines of text: its name says so (``is_table``),
    or its content is JSON, JSON Lines or Parquet (a file that cannot be read is left to its reader)."""
    if is_table(path):
        return True
    try:
        return read_text(path)[1] in ("json", "jsonl", "parquet")
    except (DataError, OSError):
        return False


def read_table(path: str | Path, content: tuple[str, str] | None = None) -> Table:
    """Every record of ``path``: see the module docstring for the formats, decided from the file's content
    (``formats.read_text``; ``content`` is its ``(text, format)`` when already read). A file with no
    record is an error."""
    p = Path(path)
    if p.is_dir():
        table = _read_dataset(p)
    else:
        text, kind = content or read_text(check_file(p))
        table = _read_text_table(p, text, kind)
    if not table.rows:
        raise DataError(f"{p}: no records found")
    return table


def _read_text_table(p: Path, text: str, kind: str) -> Table:
    if kind == "parquet":
        pq = need("pyarrow.parquet", "data", "reading Parquet files")
        try:
            records = pq.read_table(p).to_pylist()
        except Exception as err:  # noqa: BLE001 - pyarrow raises its own types for damaged files
            raise DataError(f"{p}: not a readable Parquet file ({err})") from None
        return _from_records(str(p), records, [f"{p}:row {i}" for i in range(1, len(records) + 1)])
    if not text.strip():
        raise DataError(f"{p}: the file is empty")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as Python's text mode reads it
    if kind in ("csv", "tsv"):
        first = text.lstrip("\n").split("\n", 1)[0]
        if kind == "csv" and "," not in first and ";" in first:  # a spreadsheet's CSV in a comma-decimal locale
            warn(f"{p}: line 1 is separated by semicolons, not commas; it was read with ';' between fields")
            return _read_delimited(p, text, ";")
        return _read_delimited(p, text, "\t" if kind == "tsv" else ",")
    if kind == "json":
        return _read_json(p, text)
    if kind == "jsonl":
        return _read_jsonl(p, text)
    delimited = sniff(text)  # named as text, but a table is asked for: line 1's tab or comma decides
    if delimited in ("csv", "tsv"):
        warn(
            f"{p} is named {hint(p)}; it was read as a table, {delimited.upper()} "
            f"(line 1 holds a {_SEPARATOR[delimited]})"
        )
        return _read_delimited(p, text, "\t" if delimited == "tsv" else ",")
    raise DataError(
        f"{p}: plain text, not a table of records (no JSON, and no tab or comma in line 1); give CSV, TSV, "
        "JSON Lines, a JSON array of objects, Parquet or a datasets folder"
    )


def pick_column(
    table: Table, given: str | None, known: tuple[str | None, ...], what: str, option: str | None = None
) -> str:
    """The column named ``given``, else the first of ``known`` present (case-insensitive), else (for
    texts) the column of the longest strings; an error listing the columns when none fits. ``option`` is
    the command's option that names the column (``--text-column``), or None where the command has none:
    the error then says which name the column should have."""
    if given is not None:
        if given not in table.columns:
            named = f" ({option})" if option else ""
            raise DataError(f"{table.source}: no column {given!r}; columns are {table.columns}{named}")
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
    usual = next(name for name in known if name is not None)
    advice = f"pass {option}" if option else f"name that column {usual!r}"
    raise DataError(f"{table.source}: which column holds the {what}? columns are {table.columns}; {advice}")


def is_sentence(name: str) -> bool:
    """A column name that reads like a record (three words or more, a sentence's end, or long): a file
    without a header whose first record was taken as one. "Review Text" is a header."""
    text = name.strip()
    return len(text.split()) >= 3 or text.endswith((".", "!", "?")) or len(text) > 30


def has_header_line(path: str | Path) -> bool:
    """A delimited text table (CSV or TSV, compressed or not), whose first line names its columns: only
    there can a record have been taken for the header."""
    return hint(path) in (".csv", ".tsv")


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


def _read_json(path: Path, text: str) -> Table:
    """A JSON array of records; or an object: one record, or (when exactly one of its fields is a list of
    objects, as ``{"data": [...]}``) the records of that list, said in a warning."""
    records = parse_json(text, str(path))
    if isinstance(records, dict):
        lists = [k for k, v in records.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
        if len(lists) > 1:
            raise DataError(
                f"{path}: a JSON object holding {len(lists)} lists of records ({', '.join(map(repr, lists))}); "
                "give each as a file of its own (a JSON array, or JSON Lines)"
            )
        if lists:
            others = [k for k in records if k != lists[0]]
            left = f"; its other fields ({', '.join(map(repr, others[:8]))}) are not records" if others else ""
            records = records[lists[0]]
            warn(f"{path}: a JSON object; its {len(records)} records were read from its {lists[0]!r} list{left}")
        else:
            records = [records]
    if not isinstance(records, list):
        raise DataError(
            f"{path}: a JSON file holds {json_kind(records)}; give a list of objects (or JSON Lines, one per line)"
        )
    return _from_records(str(path), records, [f"{path}: record {i}" for i in range(1, len(records) + 1)])


def _read_delimited(path: Path, text: str, delimiter: str) -> Table:
    """Records of a CSV/TSV file with a header (a quoted field may span lines, and be of any length). A
    TSV is read with CSV quoting only when its content says so (``formats.tsv_is_quoted``); a plain TSV
    keeps every quote mark as text."""
    plain = delimiter == "\t" and not tsv_is_quoted(text)
    lines = _plain_lines(text) if plain else csv_records(text, delimiter, path)
    rows, where = [], []
    names = next(lines, (1, []))[1]
    if not names or names == [""]:
        raise DataError(f"{path}: the file is empty; the first line names the columns")
    if len(set(names)) != len(names):
        raise DataError(f"{path}:1: the header repeats a column name: {names}")
    for line, row in lines:
        if not row or row == [""]:
            continue
        if len(row) != len(names):
            shown = f"{len(row)} fields where the header has {len(names)} ({names})"
            raise DataError(f"{path}:{line}: {shown}; {_advice(delimiter, plain)}")
        rows.append(dict(zip(names, row)))
        where.append(f"{path}:{line}")
    return Table(str(path), names, rows, where, {}, "tsv" if delimiter == "\t" else "csv")


def _advice(delimiter: str, plain: bool) -> str:
    """What to do about a record whose fields the header's do not match, for how the file was read."""
    if delimiter != "\t":
        return 'quote the fields that hold the delimiter ("a, b")'
    if plain:
        return "a tab separates fields in a TSV: replace the tabs inside a text by spaces"
    return (
        "a field in quotes may hold tabs and line breaks, up to its closing quote: check the quotes around "
        'this line, or write a quote inside a text as two ("")'
    )


def _plain_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of a plain TSV: a line is a record, a tab separates its fields."""
    for number, line in enumerate(text.split("\n"), 1):
        yield number, line.split("\t")


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


def split_validation(
    n: int, frac: float = 0.1, seed: int = 0, labels: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random split of ``range(n)`` into ``(train_indices, val_indices)``; val gets floor(frac·n).

    With ``labels`` (one class index per record) the split is stratified: each class gives its share of
    the floor(frac·n) validation records (rounded by largest remainder), at least one when it has two or
    more records, and never its last one, so validation sees every class training sees twice or more."""
    if not 0.0 <= frac < 1.0:
        raise ValueError(f"validation fraction must be in [0, 1), got {frac}")
    rng = np.random.default_rng(seed)
    if labels is None:
        order = rng.permutation(n)
        n_val = int(np.floor(frac * n))
        return order[: n - n_val], order[n - n_val :]
    labels = np.asarray(labels, dtype=np.int64)
    if len(labels) != n:
        raise ValueError(f"{len(labels)} labels for {n} records")
    classes, counts = np.unique(labels, return_counts=True)
    quota = frac * counts
    take = np.floor(quota).astype(np.int64)
    short = int(np.floor(frac * n)) - int(take.sum())
    if short > 0:  # the largest remainders get one more (ties: the earlier class)
        take[np.argsort(-(quota - take), kind="stable")[:short]] += 1
    if frac > 0:
        take = np.where(counts >= 2, np.maximum(take, 1), take)
    take = np.minimum(take, np.maximum(counts - 1, 0))  # a class keeps a training record
    val = [rng.permutation(np.flatnonzero(labels == c))[:t] for c, t in zip(classes, take)]
    val_idx = np.sort(np.concatenate([np.zeros(0, np.int64), *val]))
    return np.setdiff1d(np.arange(n), val_idx), val_idx

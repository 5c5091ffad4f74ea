"""What a run recorded while training: ``metrics.csv`` (every logged row) and ``history.json`` (every
evaluation), read back for curves and the inspector.

Both files are only a record: a damaged one (cut short by a full disk, edited by hand, overwritten)
is a ``HistoryFileError`` naming the file and what is wrong in it, never a crash, and the run's model
stays usable (the inspector shows the run without its curves).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from ..errors import DataError


class HistoryFileError(DataError):
    """A ``metrics.csv`` or ``history.json`` that cannot be read as one: ``path`` is the file,
    ``reason`` what is wrong in it (without the path, for pages that must not show it)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}; the run's model is not affected, only its training curves")
        self.path, self.reason = path, reason


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise HistoryFileError(path, f"is not UTF-8 text (byte {err.start} is {err.object[err.start]:#04x})") from None
    except OSError as err:
        raise HistoryFileError(path, f"cannot be read ({err.strerror or err})") from None


def _number(path: Path, line: int, column: str, cell: str) -> float | None:
    if cell == "":
        return None
    try:
        return float(cell)
    except ValueError:
        raise HistoryFileError(path, f"line {line}, column {column!r}: {cell[:40]!r} is not a number") from None


def read_metrics(run_dir: str | Path) -> list[dict[str, float | None]]:
    """The rows of ``RUN/metrics.csv`` with numbers parsed (empty cells become ``None``); none when the
    file is absent. Every row has a finite ``step``; anything else is a ``HistoryFileError``."""
    path = Path(run_dir) / "metrics.csv"
    if not path.is_file():
        return []
    try:
        table = [row for row in csv.reader(io.StringIO(_text(path), newline=""), strict=True) if row]
    except csv.Error as err:  # an unterminated quote, a field over the size limit, ...
        raise HistoryFileError(path, f"is not a CSV table ({err})") from None
    if not table:
        return []
    header, rows = table[0], []
    if "step" not in header:
        raise HistoryFileError(path, f"has no 'step' column (its first line is {','.join(header)[:60]!r})")
    for line, cells in enumerate(table[1:], start=2):  # blank lines skipped: a line number is a guide
        if len(cells) != len(header):
            raise HistoryFileError(path, f"line {line} has {len(cells)} cells, the header {len(header)}")
        row = {column: _number(path, line, column, cell) for column, cell in zip(header, cells)}
        if row["step"] is None or not math.isfinite(row["step"]):
            raise HistoryFileError(path, f"line {line}: the step {cells[header.index('step')]!r} is not a number")
        rows.append(row)
    return rows


def read_history(run_dir: str | Path) -> list[dict[str, Any]]:
    """The evaluations of ``RUN/history.json`` (none when absent): a list of objects, each with a
    finite ``step``; anything else is a ``HistoryFileError``."""
    path = Path(run_dir) / "history.json"
    if not path.is_file():
        return []
    try:
        rows = json.loads(_text(path))
    except (ValueError, RecursionError) as err:  # RecursionError: arrays nested thousands deep
        raise HistoryFileError(path, f"is not valid JSON ({err})") from None
    if not isinstance(rows, list):
        raise HistoryFileError(path, f"holds a {type(rows).__name__}, not a list of evaluations")
    for i, row in enumerate(rows):
        step = row.get("step") if isinstance(row, dict) else None
        if not isinstance(step, (int, float)) or isinstance(step, bool) or not math.isfinite(step):
            raise HistoryFileError(path, f"evaluation {i} is not an object with a numeric 'step'")
    return rows

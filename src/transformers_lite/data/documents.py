"""Unlabelled documents for pretraining: review files read for their text only, or plain text.

A JSON Lines file gives one document per record (its ``review_body`` or ``text`` field; a ``stars``
field is never read), a CSV file named ``.csv`` its ``review_body`` column, and any other file one
document per non-empty line. What a file is is decided from its content (``formats``), compressed or not.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..errors import DataError
from .formats import hint, read_text
from .inputs import parse_json

FIELDS = ("review_body", "text")


def read_documents(path: str | Path) -> list[str]:
    """The documents of ``path`` (empty ones skipped); a record without a text field is an error."""
    path = Path(path)
    text, kind = read_text(path)
    if not text.strip():
        raise DataError(f"{path}: the file is empty")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    docs: list[str] = []
    if kind == "jsonl":
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            record = parse_json(line, f"{path}:{number}")
            found = [record[f] for f in FIELDS if isinstance(record, dict) and isinstance(record.get(f), str)]
            if not found:
                raise DataError(f"{path}:{number}: no 'review_body' or 'text' field")
            docs.append(found[0])
    elif kind == "csv" and hint(path) == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        column = next((f for f in FIELDS if f in (reader.fieldnames or [])), None)
        if column is None:
            raise DataError(f"{path}: no 'review_body' or 'text' column (columns: {reader.fieldnames})")
        docs = [row[column] or "" for row in reader]
    else:
        docs = text.split("\n")
    docs = [d for d in docs if d.strip()]
    if not docs:
        raise DataError(f"{path}: no documents (every line or record is empty)")
    return docs

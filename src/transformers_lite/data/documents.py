"""Unlabelled documents for pretraining: review files read for their text only, or plain text.

A table of records (JSON Lines, a JSON array or object, Parquet, or a CSV/TSV file named so: read by
``data.tables``) gives one document per record (its ``review_body`` or ``text`` field; a ``stars``
field is never read), and any other file one document per non-empty line. What a file is is decided
from its content (``formats``), compressed or not.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataError
from .formats import hint, read_text
from .tables import Table, read_table

FIELDS = ("review_body", "text")


def read_documents(path: str | Path) -> list[str]:
    """The documents of ``path`` (empty ones skipped); a record without a text field is an error."""
    path = Path(path)
    text, kind = read_text(path)
    if not text.strip():
        raise DataError(f"{path}: the file is empty")
    if kind in ("jsonl", "json", "parquet") or (kind in ("csv", "tsv") and hint(path) in (".csv", ".tsv")):
        docs = _record_texts(read_table(path, (text, kind)))
    else:
        docs = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    docs = [d for d in docs if d.strip()]
    if not docs:
        raise DataError(f"{path}: no documents (every line or record is empty)")
    return docs


def _record_texts(table: Table) -> list[str]:
    """Each record's ``review_body`` (else ``text``) field: a record without one is an error naming it."""
    docs = []
    for row, where in zip(table.rows, table.where):
        found = [row[f] for f in FIELDS if isinstance(row.get(f), str)]
        if not found:
            raise DataError(f"{where}: no 'review_body' or 'text' field (fields: {', '.join(map(repr, row))})")
        docs.append(found[0])
    return docs

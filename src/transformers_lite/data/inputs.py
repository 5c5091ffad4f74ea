"""Inputs for batch inference: one text per line of a file or of standard input (``-``).

One output per input line, in order, needs one rule for what a line is, the same for files and
standard input: lines end with ``\\n`` (or ``\\r\\n``, taken whole), and nothing else ends a line. A
lone ``\\r``, a vertical tab or form feed, U+0085, U+2028 or U+2029 inside a line is part of its text,
even though Python's universal newlines and ``str.splitlines`` would cut the line there and shift
every output after it. Standard input is therefore read as bytes, like a file, and decoded here.

A file is JSON Lines when its content says so (``formats.sniff``: its first line is a JSON object; in a
file named ``.txt``, every line), whatever its name or compression; each record then gives its text in
one of ``fields`` (``text`` first) as a JSON string. Otherwise every line is one text. An empty line or
record, or a field that is not a string, is an error naming the line.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..errors import DataError
from .formats import decode, decompress, read_text, sniff

_JSON_KINDS = {bool: "a boolean", int: "a number", float: "a number", dict: "an object", list: "a list"}


def read_inputs(
    source: str, fields: tuple[str, ...] = ("text",), content: tuple[str, str] | None = None
) -> tuple[list[str], bool]:
    """``(texts, is_jsonl)`` from ``source`` (a path, or ``-`` for standard input): one text per line.
    ``content`` is the file's ``(text, format)`` when already read (``formats.read_text``)."""
    texts, records = read_input_records(source, fields, content)
    return texts, records is not None


def read_input_records(
    source: str, fields: tuple[str, ...] = ("text",), content: tuple[str, str] | None = None
) -> tuple[list[str], list[dict[str, Any]] | None]:
    """``(texts, records)``: as ``read_inputs``, with each JSON Lines record whole (its other fields, an
    id, for the outputs to keep beside the results); ``records`` is None for lines of plain text."""
    name = "<stdin>" if source == "-" else source
    if source == "-":
        raw = _stdin_bytes()  # compressed or not, as a file is (``formats.decompress``)
        text = decode(decompress(raw, name), name) if isinstance(raw, bytes) else raw.removeprefix("\ufeff")
        kind = sniff(text)
    else:
        text, kind = content or read_text(source)
    if "\r" in text.rstrip("\r") and "\n" not in text:
        raise DataError(
            f"{name}: lines end with a carriage return only (old Mac line endings), which would make the "
            "whole file one input; convert them to \\n first (e.g. tr '\\r' '\\n')"
        )
    lines = split_lines(text)
    if not lines:
        raise DataError(f"{name}: no input lines")
    if kind == "json" and len(lines) > 1:
        raise DataError(
            f"{name}: a JSON document over {len(lines)} lines, not one input per line; give JSON Lines (one "
            "object per line), or the file itself as --input (its records are read)"
        )
    if kind == "parquet":
        raise DataError(f"{name}: a Parquet file, not one input per line; give it as --input (its records are read)")
    jsonl = kind in ("json", "jsonl")
    texts, records = [], []
    for number, line in enumerate(lines, 1):
        where = f"{name}:{number}"
        if jsonl:
            records.append(_record(line, where))
        text = _record_text(records[-1], fields, where) if jsonl else line
        if not text.strip():
            raise DataError(f"{where}: empty input; every line needs a text (one output per line)")
        texts.append(text)
    return texts, records if jsonl else None


def split_lines(text: str) -> list[str]:
    """The lines of ``text``: split at ``\\n`` only (a ``\\r`` right before it goes with it); the newline
    that ends the last line does not start another."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _record(line: str, where: str) -> dict[str, Any]:
    record = parse_json(line, where, "; give one JSON object per line")
    if not isinstance(record, dict):
        raise DataError(f"{where}: {json_kind(record)}, not a JSON object; give one object per line")
    return record


def _record_text(record: dict[str, Any], fields: tuple[str, ...], where: str) -> str:
    field = next((f for f in fields if f in record), None)
    if field is None:
        raise DataError(f"{where}: no {' or '.join(repr(f) for f in fields)} field")
    value = record[field]
    if not isinstance(value, str):
        shown = json.dumps(value)[:40]
        raise DataError(f"{where}: the {field!r} field holds {json_kind(value)} ({shown}), not a string")
    return value


def parse_json(text: str, where: str, hint: str = "") -> Any:  # noqa: ANN401
    """``json.loads(text)``; invalid JSON is a ``DataError`` naming ``where`` (with the line number when
    ``text`` has several lines), the problem and its column, then ``hint``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        place = f"{where}:{err.lineno}" if "\n" in text else where
        raise DataError(f"{place}: invalid JSON ({err.msg} at column {err.colno}){hint}") from None


def json_kind(value: object) -> str:
    """What a JSON value is, for error messages: ``"a number"``, ``"an object"``, ``"null"``, ..."""
    return "null" if value is None else _JSON_KINDS.get(type(value), type(value).__name__)


def _stdin_bytes() -> bytes | str:
    """Standard input as bytes when it has them (a text stream would already have cut lines at ``\\r``)."""
    buffer = getattr(sys.stdin, "buffer", None)
    return buffer.read() if buffer is not None else sys.stdin.read()

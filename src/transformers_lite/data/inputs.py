"""Inputs for batch inference: one text per line of a file or of standard input (``-``).

One output per input line, in order, needs one rule for what a line is, the same for files and
standard input: lines end with ``\\n`` (or ``\\r\\n``, taken whole), and nothing else ends a line. A
lone ``\\r``, a vertical tab or form feed, U+0085, U+2028 or U+2029 inside a line is part of its text,
even though Python's universal newlines and ``str.splitlines`` would cut the line there and shift
every output after it. Standard input is therefore read as bytes, like a file, and decoded here.

A file is JSON Lines when its name ends in ``.jsonl`` or its first line starts with ``{``; each record
then gives its text in one of ``fields`` (``text`` first) as a JSON string. Otherwise every line is one
text. An empty line or record, or a field that is not a string, is an error naming the line.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import DataError

_JSON_KINDS = {bool: "a boolean", int: "a number", float: "a number", dict: "an object", list: "a list"}


def read_inputs(source: str, fields: tuple[str, ...] = ("text",)) -> tuple[list[str], bool]:
    """``(texts, is_jsonl)`` from ``source`` (a path, or ``-`` for standard input): one text per line."""
    name = "<stdin>" if source == "-" else source
    text = _decode(_stdin_bytes() if source == "-" else _file_bytes(source), name)
    if "\r" in text.rstrip("\r") and "\n" not in text:
        raise DataError(
            f"{name}: lines end with a carriage return only (old Mac line endings), which would make the "
            "whole file one input; convert them to \\n first (e.g. tr '\\r' '\\n')"
        )
    lines = split_lines(text)
    if not lines:
        raise DataError(f"{name}: no input lines")
    jsonl = name.endswith(".jsonl") or lines[0].lstrip().startswith("{")
    texts = []
    for number, line in enumerate(lines, 1):
        where = f"{name}:{number}"
        text = _record_text(line, fields, where) if jsonl else line
        if not text.strip():
            raise DataError(f"{where}: empty input; every line needs a text (one output per line)")
        texts.append(text)
    return texts, jsonl


def split_lines(text: str) -> list[str]:
    """The lines of ``text``: split at ``\\n`` only (a ``\\r`` right before it goes with it); the newline
    that ends the last line does not start another."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _record_text(line: str, fields: tuple[str, ...], where: str) -> str:
    record = parse_json(line, where, "; give one JSON object per line")
    if not isinstance(record, dict):
        raise DataError(f"{where}: {json_kind(record)}, not a JSON object; give one object per line")
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


def _file_bytes(source: str) -> bytes:
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"file not found: {path}")
    if not path.is_file():
        raise DataError(f"{path} is not a file")
    try:
        return gzip.open(path, "rb").read() if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError) as err:
        raise DataError(f"{path}: cannot be read ({err})") from None


def _decode(raw: bytes | str, name: str) -> str:
    """UTF-8 text without a byte-order mark; undecodable bytes are an error naming the line."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw[: err.start].count(b"\n") + 1
            bad = raw[err.start : err.start + 1]
            raise DataError(f"{name}:{line}: bytes that are not UTF-8 ({bad!r}); save the input as UTF-8") from None
        return text.removeprefix("\ufeff")
    return raw.removeprefix("\ufeff")

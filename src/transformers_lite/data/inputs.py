"""Inputs for batch inference: one text per line of a file or of standard input (``-``).

A file is JSON Lines when its name ends in ``.jsonl`` or its first line starts with ``{``; each record
then gives its text in one of ``fields`` (``text`` first). Otherwise every line is one text. An empty
line or record is an error naming the line: one output per input line, in order, needs every line.
"""

from __future__ import annotations

import json
import sys

from ..errors import DataError
from .sources import read_text_file


def read_inputs(source: str, fields: tuple[str, ...] = ("text",)) -> tuple[list[str], bool]:
    """``(texts, is_jsonl)`` from ``source`` (a path, or ``-`` for standard input)."""
    if source == "-":
        text, name = sys.stdin.read().replace("\r\n", "\n"), "<stdin>"
    else:
        text, name = read_text_file(source), source
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    if not lines:
        raise DataError(f"{name}: no input lines")
    jsonl = name.endswith(".jsonl") or lines[0].lstrip().startswith("{")
    texts = []
    for number, line in enumerate(lines, 1):
        where = f"{name}:{number}"
        if jsonl:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{where}: invalid JSON ({err.msg}); give one JSON object per line") from None
            found = [record[f] for f in fields if isinstance(record, dict) and f in record]
            if not found:
                raise DataError(f"{where}: no {' or '.join(repr(f) for f in fields)} field")
            line = found[0]
        if not isinstance(line, str) or not line.strip():
            raise DataError(f"{where}: empty input; every line needs a text (one output per line)")
        texts.append(line)
    return texts, jsonl

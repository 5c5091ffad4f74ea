"""What a learner has done: the exercises passed and the hints seen, in a small JSON file under the
user's data folder (``$XDG_DATA_HOME/transformers-lite/exercises.json``, by default under
``~/.local/share``), written atomically.

A missing file is an empty record. A file that cannot be read (a hand edit left a trailing comma, a
``"hints"`` that is not a count) is an error naming the file and what is wrong, and it is left as it
is: a fresh record written in its place would lose every exercise it recorded (``atomic.read_record``).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text, read_record
from ..errors import DataError

WHAT = "record of the exercises you have done"


def progress_file() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "transformers-lite" / "exercises.json"


def problem(data: Any) -> str | None:  # noqa: ANN401 - any JSON value
    """What is wrong with a progress record, or None: an object of exercise name -> an object whose
    ``"passed"`` (when) is a text (or true or false) and ``"hints"`` (how many seen) a whole number >= 0."""
    if not isinstance(data, dict):
        return f"it holds {type(data).__name__}, not an object of exercise name -> what was done"
    for name, entry in data.items():
        if not isinstance(entry, dict):
            return f'{name!r} holds {json.dumps(entry)[:40]}, not an object like {{"hints": 1}}'
        hints, passed = entry.get("hints", 0), entry.get("passed")
        if isinstance(hints, bool) or not isinstance(hints, int) or hints < 0:
            return f'{name!r}: "hints" is {json.dumps(hints)[:40]}, not a whole number >= 0'
        if passed is not None and not isinstance(passed, (str, bool)):
            return f'{name!r}: "passed" is {json.dumps(passed)[:40]}, not the time it was passed'
    return None


def read_progress() -> dict[str, dict[str, Any]]:
    """Exercise name -> ``{"passed": when, "hints": how many seen}``; a damaged file is a ``DataError``
    naming it (and left as it is)."""
    data: dict[str, dict[str, Any]] = read_record(progress_file(), WHAT, problem, dict, DataError)
    return data


def record(name: str, **fields: Any) -> None:  # noqa: ANN401
    """Merge ``fields`` into exercise ``name``'s record (``passed=True`` records when)."""
    data = read_progress()
    entry = data.setdefault(name, {})
    for key, value in fields.items():
        entry[key] = datetime.now(timezone.utc).isoformat(timespec="seconds") if value is True else value
    path = progress_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))

"""What a learner has done: the exercises passed and the hints seen, in a small JSON file under the
user's data folder (``$XDG_DATA_HOME/transformers-lite/exercises.json``, by default under
``~/.local/share``), written atomically. A missing or unreadable file is an empty record."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text


def progress_file() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "transformers-lite" / "exercises.json"


def read_progress() -> dict[str, dict[str, Any]]:
    """Exercise name -> ``{"passed": when, "hints": how many seen}``."""
    try:
        data = json.loads(progress_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def record(name: str, **fields: Any) -> None:  # noqa: ANN401
    """Merge ``fields`` into exercise ``name``'s record (``passed=True`` records when)."""
    data = read_progress()
    entry = data.setdefault(name, {})
    for key, value in fields.items():
        entry[key] = datetime.now(timezone.utc).isoformat(timespec="seconds") if value is True else value
    path = progress_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))

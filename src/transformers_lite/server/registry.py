"""The runs a server shows: one run directory, or every run directory inside a folder.

Runs are loaded on first use and kept; a run still training is loaded again from each newer checkpoint
it writes, and runs that appear in the folder later are added when the run list is asked for. A model
call changes nothing on the model (attention maps and every other inspected step come back from the
forward through a ``Trace``), so requests on one run need no lock.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError
from ..families import load
from ..pipeline import Run
from ..runs.files import weights_file


@dataclass
class Entry:
    name: str
    path: Path
    family: str
    run: Run | None = None
    weights: Path | None = None  # the file the run was loaded from (a checkpoint while it trains)


def _family(path: Path) -> str:
    try:
        return json.loads((path / "config.json").read_text(encoding="utf-8")).get("family", "?")
    except (OSError, ValueError):
        return "?"


class RunRegistry:
    """Runs by name. ``root`` is a run directory (it holds ``config.json``) or a folder of them
    (searched two levels deep); a path with no run is a ``RunError`` raised at once."""

    def __init__(self, root: str | Path) -> None:
        root = Path(root)
        if not root.is_dir():
            raise RunError(f"{root} is not a run directory or a folder of runs (no such folder)")
        self.root = root
        self.entries: dict[str, Entry] = {}
        self._loading = threading.Lock()
        self.refresh()
        if not self.entries:
            raise RunError(f"{root} holds no runs (no config.json in it or in its sub-folders)")

    def refresh(self) -> None:
        """Add the runs that appeared since (a run started after the server holds a config.json at once)."""
        root = self.root
        if (root / "config.json").is_file():
            paths = [root]
        else:
            paths = sorted({p.parent for p in [*root.glob("*/config.json"), *root.glob("*/*/config.json")]})
        for path in paths:
            name = path.name if path == root else str(path.relative_to(root))
            if name not in self.entries:
                self.entries[name] = Entry(name, path, _family(path))

    def names(self) -> list[str]:
        return list(self.entries)

    def peers(self, name: str) -> list[str]:
        """The other runs of ``name``'s model family: those whose training timelines compare with its own
        (the same probe, the same outputs)."""
        by_family: dict[str, list[str]] = {}
        for entry in list(self.entries.values()):  # a copy: another request's refresh may add runs meanwhile
            by_family.setdefault(entry.family, []).append(entry.name)
        return [other for other in by_family.get(self.entries[name].family, []) if other != name]

    def entry(self, name: str) -> Entry:
        """The named run, loaded; an unknown name is a ``KeyError`` naming the known ones."""
        if name not in self.entries:
            raise KeyError(f"no run named {name!r}; known: {', '.join(self.entries)}")
        entry = self.entries[name]
        with self._loading:
            try:
                current = weights_file(entry.path)
            except RunError:
                current = None
            if entry.run is None or (current is not None and current != entry.weights):  # a newer checkpoint
                entry.run = load(entry.path)
                entry.weights = current
        return entry

"""The runs a server shows: one run directory, or every run directory inside a folder.

A run is loaded on first use and kept with its **fingerprint**: the name, size, ``mtime_ns`` and inode of
each file at the top of its folder, of ``checkpoint/LATEST`` and of the weights file it loads (the final
``model.safetensors``, else the latest checkpoint's). Every lookup takes the fingerprint again (a few
``stat`` calls): a run whose files changed (weights replaced, a newer checkpoint of a run still training,
the folder replaced by another run) is loaded again before it answers, one whose folder is gone (deleted,
renamed) is a ``KeyError`` (404) naming it and leaves the list, so what was loaded is never served
after its folder changed. Runs that appear later are added when the list is asked for, or a run is
asked for by a name not yet known.

A run **in progress** is not a damaged one: while a process trains it (it holds the run's lock,
``runs.complete.is_training``), a load that fails (no checkpoint yet, or a file between two writes) leaves
the entry unloaded with ``pending`` saying why, and the routes answer from what the folder holds so far
(``live``); once the training process is gone, the same failure is the run's error (a 400 naming the
file). The run is tried again at every lookup, so it opens at its first checkpoint.

Run names are the routes' paths (``/api/runs/NAME/timeline``): a run folder inside another folder whose
name is one of ``RUN_ROUTES`` (``more/timeline``) would read as the route of ``more``, so it is not
served and the list names it with the reason (rename the folder to serve it). A top-level run named
``timeline`` is served: ``/api/runs/timeline`` cannot be read as a route.

A model call changes nothing on the model (attention maps and every other inspected step come back from
the forward through a ``Trace``), so requests on one run need no lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError
from ..families import load
from ..pipeline import Run
from ..runs.complete import LOCK, is_training
from ..runs.files import weights_file

# the last parts of the routes under /api/runs/NAME/ (``routes``; a test keeps the two the same)
RUN_ROUTES = (
    "embeddings",
    "timeline",
    "generate",
    "next-token",
    "classify",
    "translate",
    "trace",
    "sweep",
    "backward",
    "step",
    "exercise",
    "exercises",
)

Fingerprint = tuple[tuple[str, int, int, int], ...]


@dataclass
class Entry:
    name: str
    path: Path
    family: str
    run: Run | None = None
    fingerprint: Fingerprint = ()  # of the files ``run`` was loaded from
    pending: str | None = None  # while it trains and cannot be loaded yet: why (see the module docstring)


def _family(path: Path) -> str:
    try:
        return json.loads((path / "config.json").read_text(encoding="utf-8")).get("family", "?")
    except (OSError, ValueError):
        return "?"


# not what a load reads: the lock, and the record the views read afresh at every request (a run in progress
# rewrites it every few seconds, which must not load its model again each time)
UNREAD = (LOCK, "metrics.csv", "history.json")


def fingerprint(path: Path) -> Fingerprint:
    """What a run's folder holds now, cheaply: ``(name, size, mtime_ns, inode)`` of its top-level files
    (but ``UNREAD``), of ``checkpoint/LATEST`` and of the weights file a load takes. Any file written,
    replaced (a new inode, even with the same size and time, as a copy or an atomic rename gives) or
    removed changes it."""
    files = []
    try:
        with os.scandir(path) as found:
            files = [Path(e.path) for e in found if e.name not in UNREAD and e.is_file(follow_symlinks=False)]
    except OSError:
        return ()
    files.append(path / "checkpoint" / "LATEST")
    try:
        files.append(weights_file(path))
    except RunError:
        pass
    out = []
    for file in files:
        try:
            st = file.stat()
        except OSError:
            continue
        out.append((str(file.relative_to(path)), st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(sorted(set(out)))


def _tokenizers(path: Path) -> str:
    """One digest of a run's tokenizer files (``tokenizer.json``, a translator's two), "" when it has none."""
    digest = hashlib.sha256()
    files = sorted(path.glob("*tokenizer*.json"))
    for file in files:
        try:
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
        except OSError:
            return ""
    return digest.hexdigest() if files else ""


def route_clash(name: str) -> str | None:
    """Why a run called ``name`` would read as another run's route (``more/timeline``), or ``None``."""
    folder, _, last = name.rpartition("/")
    if folder and last in RUN_ROUTES:
        return f"its folder's name reads as the route /{last} of {folder!r}; rename the folder {name!r} to serve it"
    return None


class RunRegistry:
    """Runs by name. ``root`` is a run directory (it holds ``config.json``) or a folder of them
    (searched two levels deep); a path with no run is a ``RunError`` raised at once."""

    def __init__(self, root: str | Path) -> None:
        root = Path(root)
        if not root.is_dir():
            raise RunError(f"{root} is not a run directory or a folder of runs (no such folder)")
        self.root = root
        self.entries: dict[str, Entry] = {}
        self.refused: dict[str, str] = {}  # run folders not served: name -> why
        self._loading = threading.Lock()  # one load at a time
        self._listing = threading.Lock()  # one change of the list at a time (taken after _loading, never before)
        self.refresh()
        if not self.entries and not self.refused:
            raise RunError(f"{root} holds no runs (no config.json in it or in its sub-folders)")

    def refresh(self) -> None:
        """The list as the folder holds it now: runs that appeared are added, runs whose folder is gone
        (or holds no ``config.json`` any more) are dropped."""
        with self._listing:
            self._refresh()

    def _refresh(self) -> None:
        root = self.root
        if (root / "config.json").is_file():
            paths = [root]
        else:
            paths = sorted({p.parent for p in [*root.glob("*/config.json"), *root.glob("*/*/config.json")]})
        names = {(path.name if path == root else path.relative_to(root).as_posix()): path for path in paths}
        self.refused = {name: why for name in names if (why := route_clash(name))}
        kept = {}
        for name in sorted(n for n in names if n not in self.refused):
            entry = self.entries.get(name) or Entry(name, names[name], "?")
            entry.family = _family(names[name])  # a folder replaced by a run of another family says so at once
            kept[name] = entry
        self.entries = kept

    def names(self) -> list[str]:
        return list(self.entries)

    def peers(self, name: str) -> list[str]:
        """The other runs of ``name``'s model family: those whose training timelines compare with its own
        (the same probe, the same outputs)."""
        by_family: dict[str, list[str]] = {}
        for entry in list(self.entries.values()):  # a copy: another request's refresh may add runs meanwhile
            by_family.setdefault(entry.family, []).append(entry.name)
        mine = self.entries.get(name)
        return [other for other in by_family.get(mine.family, []) if other != name] if mine else []

    def comparable(self, name: str) -> list[str]:
        """The peers of ``name`` (its family's other runs) whose tokenizers are the same files: the same
        input reads as the same tokens in both, so their steps compare position by position."""
        mine = _tokenizers(self.entries[name].path) if name in self.entries else None
        return [p for p in self.peers(name) if mine and p in self.entries and _tokenizers(self.entries[p].path) == mine]

    def _unknown(self, name: str) -> KeyError:
        if name in self.refused:
            return KeyError(f"run {name!r} is not served: {self.refused[name]}")
        return KeyError(f"no run named {name!r}; known: {', '.join(self.entries) or 'none'}")

    def entry(self, name: str) -> Entry:
        """The named run, loaded from what its folder holds now, or, while it trains and cannot be loaded
        yet, unloaded with ``pending`` saying why (see the module docstring); an unknown or vanished name
        is a ``KeyError`` naming the known ones, a damaged run the ``RunError`` naming the file."""
        with self._loading:
            if name not in self.entries:
                self.refresh()  # a run started since, asked for by name
            entry = self.entries.get(name)
            if entry is None:
                raise self._unknown(name)
            now = fingerprint(entry.path)
            if not (entry.path / "config.json").is_file():  # deleted, renamed, emptied: never served from memory
                self.refresh()
                raise KeyError(f"run {name!r} is gone: its folder no longer holds a run") from None
            if entry.run is None or now != entry.fingerprint:
                entry.run, entry.fingerprint, entry.pending = None, (), None  # a failed load serves nothing old
                entry.family = _family(entry.path)
                try:
                    entry.run = load(entry.path)
                except (ValueError, OSError) as err:  # RunError is a ValueError; a checkpoint pruned meanwhile
                    if not is_training(entry.path):  # asked after the failure: a training that just ended
                        raise
                    entry.pending = str(err)
                    return entry
                entry.fingerprint = now
        return entry

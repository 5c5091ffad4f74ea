"""Run directories: ``outputs/YYYYmmdd_HHMM`` (then ``_2``, ``_3``, ...), never overwritten, and locked
while a training uses them.

The lock is ``RUN_DIR/.lock``, held with ``flock``: the kernel releases it when the process ends
however it ends (even SIGKILL), so a dead run never leaves a stale lock behind, and a second
training aimed at the same directory is refused at once, naming the process that holds it.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import IO

from ..errors import RunError
from ..runs.complete import LOCK
from ..runs.snapshots import FOLDER as SNAPSHOTS  # the training timeline's folder, written as the run trains

RUN_MARKERS = ("config.json", "hyperparameters.json", "checkpoint")


def is_run(path: Path) -> bool:
    """Whether ``path`` holds a run (complete, or started and stopped before its first checkpoint)."""
    return any((path / name).exists() for name in RUN_MARKERS)


def new_run_dir(out: str | Path | None = None, root: str | Path = "outputs") -> Path:
    """Create and return a fresh run directory.

    With ``out`` that directory is used (created if needed); it must not hold a run (use ``--resume``)
    nor other files (they would be mixed with the run's). Otherwise a dated name under ``root`` gets
    a numeric suffix rather than reusing a directory.
    """
    if out is not None:
        path = Path(out)
        if path.is_dir() and is_run(path):
            raise RunError(f"{path} already holds a run; use --resume {path} to continue it or pick another --out")
        if path.is_dir() and any(p.name != LOCK for p in path.iterdir()):
            shown = ", ".join(sorted(p.name for p in path.iterdir())[:3])
            raise RunError(
                f"--out {path} is a folder with other files in it ({shown}, ...); a run needs an empty "
                "or new folder: pick another --out"
            )
        _make(path, exist_ok=True)
        return path
    base = Path(root) / time.strftime("%Y%m%d_%H%M")
    for n in range(1, 1000):
        path = base if n == 1 else base.with_name(f"{base.name}_{n}")
        try:
            _make(path, exist_ok=False)
            return path
        except FileExistsError:
            continue
    raise RunError(f"could not find a free run directory name under {root}")


def discard_if_empty(path: Path) -> bool:
    """Remove a run directory that holds nothing but its lock (a new run that failed before writing
    anything, for example on bad data), so failed attempts leave no empty dated folders behind."""
    try:
        if path.is_dir() and all(p.name == LOCK for p in path.iterdir()):
            (path / LOCK).unlink(missing_ok=True)
            path.rmdir()
            return True
    except OSError:
        pass
    return False


def discard_unstarted(path: Path) -> bool:
    """Remove a new run directory whose training failed before its first checkpoint: it holds only the
    files the run wrote at its start (settings, config, tokenizers), which the same command corrected
    writes again, so the failed attempt neither blocks that command's ``--out`` nor leaves a run that
    cannot be used. The record written as it trained (``metrics.csv``, ``history.json``, the timeline's
    ``snapshots/step-*.json``) goes with them. Anything else in the folder keeps it."""
    ours = {LOCK, "hyperparameters.json", "config.json", "manifest.json", "history.json", "metrics.csv"}
    try:
        names = {p.name for p in path.iterdir()} if path.is_dir() else None
        snapshots = sorted((path / SNAPSHOTS).iterdir()) if names and SNAPSHOTS in names else []
    except OSError:
        return False
    if names is None or not all(
        n in ours or n == SNAPSHOTS or n.startswith("tokenizer") or n.endswith("_tokenizer.json") for n in names
    ):
        return False
    if not all(p.is_file() and p.name.startswith("step-") and p.suffix == ".json" for p in snapshots):
        return False
    for file in snapshots:
        file.unlink(missing_ok=True)
    for name in names - {SNAPSHOTS}:
        (path / name).unlink(missing_ok=True)
    if SNAPSHOTS in names:
        _rmdir(path / SNAPSHOTS)
    return discard_if_empty(path) or _rmdir(path)


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except OSError:
        return False


def _make(path: Path, exist_ok: bool) -> None:
    if path.exists() and not path.is_dir():
        raise RunError(f"cannot create the output directory {path}: a file of that name is in the way")
    try:
        path.mkdir(parents=True, exist_ok=exist_ok)
    except FileExistsError:
        raise  # a dated name already taken: the caller tries the next suffix
    except PermissionError:
        raise PermissionError(f"cannot create the output directory {path}: permission denied") from None
    except OSError as err:  # e.g. a path component is a file
        raise RunError(f"cannot create the output directory {path}: {err.strerror}") from None
    if not os.access(path, os.W_OK):
        raise PermissionError(f"the output directory {path} is not writable")


class RunLock:
    """``with RunLock(run_dir):`` holds the run directory for this process (see the module docstring)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK
        self.handle: IO[str] | None = None

    def __enter__(self) -> RunLock:
        handle = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunError(
                f"{self.path.parent} is in use by {holder}; wait for it to finish, or train into another --out"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()} on {os.uname().nodename}")
        handle.flush()
        self.handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None

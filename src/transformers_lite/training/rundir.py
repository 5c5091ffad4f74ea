"""Run directories: ``outputs/YYYYmmdd_HHMM`` (then ``_2``, ``_3``, ...), never overwritten."""

from __future__ import annotations

import os
import time
from pathlib import Path


def new_run_dir(out: str | Path | None = None, root: str | Path = "outputs") -> Path:
    """Create and return a fresh run directory.

    With ``out`` that directory is used (created if needed; it must not already hold a run).
    Otherwise a dated name under ``root`` gets a numeric suffix rather than reusing a directory.
    """
    if out is not None:
        path = Path(out)
        if (path / "config.json").exists():
            raise ValueError(f"{path} already holds a run; use --resume {path} to continue it or pick another --out")
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
    raise ValueError(f"could not find a free run directory name under {root}")


def _make(path: Path, exist_ok: bool) -> None:
    try:
        path.mkdir(parents=True, exist_ok=exist_ok)
    except FileExistsError:
        if not exist_ok or not path.is_dir():
            raise
    except PermissionError:
        raise PermissionError(f"cannot create the output directory {path}: permission denied") from None
    except OSError as err:  # e.g. a path component is a file
        raise ValueError(f"cannot create the output directory {path}: {err.strerror}") from None
    if not os.access(path, os.W_OK):
        raise PermissionError(f"the output directory {path} is not writable")

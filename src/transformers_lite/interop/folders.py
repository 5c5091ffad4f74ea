"""Where a conversion may write: never over its own input, never over a run, and over other files
only when asked (``--force``). ``import-hf`` and ``export-hf`` both check here before writing."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import RunError

RUN_ONLY = (
    "hyperparameters.json",
    "checkpoint",
)  # files only a run holds (a Hugging Face folder has a config.json too)


def holds_run(folder: Path) -> bool:
    """Whether ``folder`` is a run directory: a run's own files, or a ``config.json`` naming a model family."""
    if any((folder / name).exists() for name in RUN_ONLY):
        return True
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent or unreadable: no run's config
        return False
    return isinstance(config, dict) and "family" in config


def check_output_folder(out: str | Path, source: str | Path | None = None, force: bool = False) -> Path:
    """``out`` as a ``Path`` once it is safe to write: a ``RunError`` naming it when it is ``source``
    itself or inside it, holds a run (always refused), is a file, or holds other files (unless ``force``)."""
    out = Path(out)
    if source is not None:
        inside = Path(source).resolve()
        if out.resolve() == inside or out.resolve().is_relative_to(inside):
            raise RunError(f"{out} is {source} itself or inside it; write the conversion to another folder")
    if out.exists() and not out.is_dir():
        raise RunError(f"{out} exists and is not a folder; pick another output directory")
    if out.is_dir() and holds_run(out):
        raise RunError(f"{out} already holds a run; pick another output directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        names = sorted(p.name for p in out.iterdir())
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise RunError(f"{out} is not empty ({shown}); pick another output directory or add --force to overwrite it")
    return out

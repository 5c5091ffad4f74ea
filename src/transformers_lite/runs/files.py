"""The files of a run directory that hold numbers: weights in safetensors (never pickled), JSON read
with errors that name the damaged file, and the checkpoint a run's latest weights are in.

Layout of a run directory::

    config.json  hyperparameters.json  history.json  metrics.csv  model.safetensors  tokenizer*.json
    checkpoint/LATEST                  -> "step-00001200"
    checkpoint/step-00001200/          model.safetensors  optimizer.safetensors  state.json
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file, save_model
from torch import nn

from ..atomic import atomic_write
from ..errors import RunError

FORMAT = 1  # of run directories: 0 (0.1) kept optimizer states by position, 1 by parameter name


def save_weights(model: nn.Module, path: str | Path) -> None:
    """Model weights to safetensors (tied weights stored once), atomically."""
    atomic_write(path, lambda tmp: _safetensors(path, lambda: save_model(model, tmp)))


def save_tensors(tensors: dict[str, torch.Tensor], path: str | Path, metadata: dict[str, str] | None = None) -> None:
    """Tensors by name to a safetensors file (with its text ``metadata``), atomically."""
    atomic_write(path, lambda tmp: _safetensors(path, lambda: save_file(tensors, tmp, metadata=metadata)))


def _safetensors(path: str | Path, write: Callable[[], None]) -> None:
    """safetensors reports a failed write (a full disk, a quota) as its own error: an ``OSError``, which
    ``atomic_write`` names the file ``path`` in, as every other failed write."""
    try:
        write()
    except SafetensorError as err:
        said = re.search(r"os error (\d+)", str(err))  # the system's own reason: no space, file too large, ...
        if said:
            code = int(said.group(1))
            raise OSError(code, f"safetensors could not write it: {os.strerror(code)}") from None
        raise OSError(errno.EIO, f"safetensors could not write it ({err}); is the disk full?") from None


def read_tensors(path: str | Path) -> dict[str, torch.Tensor]:
    """Every tensor of a safetensors file; a truncated or foreign file is a ``RunError`` naming it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights file not found: {path}")
    try:
        return load_file(path)
    except (SafetensorError, OSError, ValueError) as err:
        raise RunError(f"{path}: damaged safetensors file ({err}); use an earlier checkpoint or retrain") from None


def load_weights(
    model: nn.Module,
    path: str | Path,
    upgrade: Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]] | None = None,
) -> None:
    """Load safetensors weights, naming missing, unexpected, mis-shaped or non-finite tensors.

    ``upgrade(tensors) -> tensors`` may rename the tensors of an older layout first (``legacy``).
    """
    stored = read_tensors(path)
    if upgrade is not None:
        stored = upgrade(stored)
    expected = model.state_dict()
    problems = [
        f"{k}: file {tuple(v.shape)} vs model {tuple(expected[k].shape)}"
        for k, v in stored.items()
        if k in expected and v.shape != expected[k].shape
    ]
    if not problems:
        missing, unexpected = load_model_tensors(model, stored)
        problems = [f"missing tensor {k}" for k in missing] + [f"unexpected tensor {k}" for k in unexpected]
    if problems:
        raise RunError(f"{path} does not match the model config: {'; '.join(problems)}")
    broken = [k for k, v in stored.items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if broken:
        raise RunError(
            f"{path}: tensor {broken[0]} holds NaN or infinite values (a damaged file, or a run that "
            "diverged); use an earlier checkpoint or retrain"
        )


def load_model_tensors(model: nn.Module, tensors: dict[str, torch.Tensor]) -> tuple[list[str], list[str]]:
    """Copy ``tensors`` into ``model``, resolving tied weights stored once; return (missing, unexpected)."""
    params = dict(model.state_dict(keep_vars=True))
    tied: dict[int, list[str]] = {}
    for name, p in params.items():
        tied.setdefault(id(p), []).append(name)
    missing = [n for n in params if not any(alias in tensors for alias in tied[id(params[n])])]
    unexpected = [n for n in tensors if n not in params]
    with torch.no_grad():
        for name, value in tensors.items():
            if name in params:
                params[name].copy_(value)
    return missing, unexpected


def complete_checkpoint(folder: Path) -> bool:
    return all((folder / f).is_file() for f in ("state.json", "model.safetensors", "optimizer.safetensors"))


def checkpoints(run_dir: str | Path) -> list[Path]:
    """The run's complete checkpoints, best first: the one ``LATEST`` names (a name inside
    ``checkpoint/``, never a path elsewhere), then the others from the newest. A ``step-*`` that is a
    symbolic link (to a folder elsewhere) is not one of them."""
    root = Path(run_dir) / "checkpoint"
    complete = sorted((p for p in root.glob("step-*") if _inside(p, root) and complete_checkpoint(p)), reverse=True)
    latest = root / "LATEST"
    try:
        named = root / latest.read_text(encoding="utf-8").strip() if latest.is_file() else None
    except (OSError, UnicodeDecodeError):
        named = None
    if named is not None and named in complete:
        complete.remove(named)
        complete.insert(0, named)
    return complete


def _inside(folder: Path, root: Path) -> bool:
    """A real folder of ``root``: a link to a folder elsewhere is no checkpoint of this run."""
    return folder.is_dir() and not folder.is_symlink() and folder.resolve().parent == root.resolve()


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The checkpoint ``LATEST`` names, or, if that one is missing or incomplete, the newest complete one."""
    found = checkpoints(run_dir)
    return found[0] if found else None


def weights_file(run_dir: Path) -> Path:
    """The run's final ``model.safetensors``, else its latest complete checkpoint's."""
    weights = run_dir / "model.safetensors"
    if not weights.is_file():
        folder = latest_checkpoint(run_dir)
        if folder is None:
            raise RunError(f"{run_dir} has neither model.safetensors nor a complete checkpoint")
        weights = folder / "model.safetensors"
    return weights

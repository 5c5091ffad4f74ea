"""Device names: ``auto`` (CUDA, then Apple's MPS, then the CPU), ``cpu``, ``cuda``, ``cuda:N``, ``mps``."""

from __future__ import annotations

import os
import re
import shutil
from typing import Any

import torch

from .errors import ConfigError, warn

DEVICES = ("auto", "cpu", "cuda", "cuda:N", "mps")


def _mps() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def resolve_device(name: str) -> str:
    """The device ``name`` stands for on this machine, or a ``ConfigError`` saying why it cannot be used."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "mps" if _mps() else "cpu"
    if name == "cpu":
        return name
    match = re.fullmatch(r"cuda(?::(\d+))?", name)
    if match:
        if not torch.cuda.is_available():
            raise ConfigError(f"--device {name} was asked for but torch sees no CUDA device; use --device cpu")
        index = int(match.group(1) or 0)
        if index >= torch.cuda.device_count():
            raise ConfigError(f"--device {name}: this machine has {torch.cuda.device_count()} CUDA device(s)")
        return name
    if name == "mps":
        if not _mps():
            raise ConfigError("--device mps was asked for but this torch build or machine has no MPS; use --device cpu")
        return name
    raise ConfigError(f"unknown device {name!r}; choose one of {', '.join(DEVICES)}")


def compiler_missing(device: str) -> str | None:
    """Why ``torch.compile`` cannot build kernels for ``device`` here, or ``None`` when it can.

    On the CPU, TorchInductor writes C++ and needs a compiler (``$CXX``, ``g++``, ``c++`` or ``clang++``);
    on CUDA it needs Triton.
    """
    if device.startswith("cuda"):
        try:
            import triton  # noqa: F401
        except ImportError:
            return "torch.compile on CUDA needs triton (pip install triton)"
        return None
    if device == "cpu":
        names = [os.environ.get("CXX", ""), "g++", "c++", "clang++"]
        if not any(name and shutil.which(name) for name in names):
            return "torch.compile on the CPU needs a C++ compiler (g++ or clang++) and none is on PATH"
    return None


def compiled(module: torch.nn.Module, device: str) -> torch.nn.Module:
    """``torch.compile(module)``, or ``module`` itself with one warning line where no compiler can serve ``device``."""
    reason = compiler_missing(device)
    if reason:
        warn(f"{reason}; running without --compile")
        return module
    return torch.compile(module)  # type: ignore[return-value]  # a compiled module calls as the module does


def to_device(batch: Any, device: torch.device) -> Any:  # noqa: ANN401 - a tensor, or tuples, lists and dicts of them
    """``batch`` on ``device``: a tensor (or anything with ``.to``), or a tuple, list or dict of such."""
    if isinstance(batch, torch.Tensor) or hasattr(batch, "to"):
        return batch.to(device)
    if isinstance(batch, (tuple, list)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch

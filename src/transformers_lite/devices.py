"""Device names: ``auto`` (CUDA, then Apple's MPS, then the CPU), ``cpu``, ``cuda``, ``cuda:N``, ``mps``."""

from __future__ import annotations

import re

import torch

from .errors import ConfigError

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

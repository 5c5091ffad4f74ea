"""Loading a trained run directory: model (in eval mode), tokenizer(s), config, recorded settings.

``load(run_dir)`` is what ``transformers_lite.load`` returns; every ``tlite`` command that reads a
run goes through it, so a damaged or mismatched file gives one clear error naming the file.
Runs of the first release are read through ``legacy``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..config import Config, config_from_dict
from ..errors import RunError
from ..models import build_model
from ..tokenizers import Tokenizer, load_tokenizer
from . import legacy
from .checkpoint import latest_checkpoint, load_weights, read_tensors

TOKENIZER_FILES = {
    "classifier": ("tokenizer",),
    "generator": ("tokenizer",),
    "seq2seq": ("src_tokenizer", "tgt_tokenizer"),
    "mlm": ("tokenizer",),
}


@dataclass
class LoadedRun:
    """What ``transformers_lite.load(run_dir)`` returns. ``hyperparameters`` (the recorded settings)
    is read when first asked for: generating text needs only the model and its tokenizer."""

    model: nn.Module
    config: Config
    tokenizers: dict[str, Tokenizer] = field(default_factory=dict)
    run_dir: Path = Path(".")

    @property
    def task(self) -> str:
        return self.config.family

    @functools.cached_property
    def hyperparameters(self) -> dict[str, Any]:
        path = self.run_dir / "hyperparameters.json"
        return read_json(path, "hyperparameters file") if path.is_file() else {}

    @property
    def tokenizer(self) -> Tokenizer:
        """The run's tokenizer (the target tokenizer of a translator)."""
        return self.tokenizers.get("tokenizer") or self.tokenizers["tgt_tokenizer"]

    @property
    def src_tokenizer(self) -> Tokenizer:
        return self.tokenizers.get("src_tokenizer") or self.tokenizers["tokenizer"]


def read_json(path: Path, what: str) -> Any:  # noqa: ANN401
    """A run's JSON file; a damaged one is a ``RunError`` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RunError(f"{path}: damaged {what} ({err})") from None


def read_config(run_dir: Path) -> Config:
    path = run_dir / "config.json"
    if not path.is_file():
        raise RunError(f"{run_dir} is not a run directory (no config.json)")
    data = read_json(path, "model config")
    if not isinstance(data, dict):
        raise RunError(f"{path}: damaged model config (not a JSON object)")
    try:
        return config_from_dict(legacy.upgrade_config(data))
    except ValueError as err:
        raise RunError(f"{path}: {err}") from None


def load_tokenizers(run_dir: Path, family: str) -> dict[str, Tokenizer]:
    """The tokenizer files a run of ``family`` needs, each checked."""
    out = {}
    for name in TOKENIZER_FILES[family]:
        path = run_dir / f"{name}.json"
        if not path.is_file():
            raise RunError(f"{run_dir}: {path.name} is missing; the run cannot turn text into ids without it")
        out[name] = load_tokenizer(path, upgrade=legacy.upgrade_tokenizer(family))
    return out


def _check_vocabularies(run_dir: Path, config: Config, tokenizers: dict[str, Tokenizer]) -> None:
    if config.family == "seq2seq":
        sizes = {"src_tokenizer": config.src_vocab_size, "tgt_tokenizer": config.tgt_vocab_size}
    else:
        sizes = {"tokenizer": config.vocab_size}
    for name, expected in sizes.items():
        if len(tokenizers[name]) != expected:
            raise RunError(
                f"{run_dir}: {name}.json has {len(tokenizers[name])} tokens but config.json expects a "
                f"vocabulary of {expected}"
            )


def weights_file(run_dir: Path) -> Path:
    """The run's final ``model.safetensors``, else its latest complete checkpoint's."""
    weights = run_dir / "model.safetensors"
    if not weights.is_file():
        folder = latest_checkpoint(run_dir)
        if folder is None:
            raise RunError(f"{run_dir} has neither model.safetensors nor a complete checkpoint")
        weights = folder / "model.safetensors"
    return weights


def read_weights(run_dir: str | Path) -> dict[str, torch.Tensor]:
    """A run's weights as tensors by name, without building its model (no random numbers drawn)."""
    run_dir = Path(run_dir)
    return legacy.upgrade_state_dict(read_tensors(weights_file(run_dir)))


def load(run_dir: str | Path, device: str | torch.device = "cpu") -> LoadedRun:
    """Model (in eval mode), tokenizer(s) and config of a run directory, validated against each other."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunError(f"{run_dir} is not a run directory (no such folder)")
    config = read_config(run_dir)
    tokenizers = load_tokenizers(run_dir, config.family)
    _check_vocabularies(run_dir, config, tokenizers)
    model = build_model(config)
    load_weights(model, weights_file(run_dir), upgrade=legacy.upgrade_state_dict)
    model.to(device).eval()
    return LoadedRun(model, config, tokenizers, run_dir)

"""Loading a trained run directory: model (in eval mode), tokenizer(s), config, recorded settings.

``load(run_dir)`` is what ``transformers_lite.load`` builds on; every ``tlite`` command that reads a
run goes through it, so a damaged or mismatched file gives one clear error naming the file.
Runs of earlier releases are read through ``legacy``. Which tokenizer files a run holds, and which
config field holds each one's size, the config class says (``tokenizers``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .. import validate
from ..atomic import read_json
from ..config import CONFIGS, Config, config_from_dict
from ..errors import RunError
from ..models import build_model
from ..tokenizers import Tokenizer, load_tokenizer
from .complete import require
from .files import load_weights, read_tensors, weights_file
from .legacy import upgrade_config, upgrade_state_dict, upgrade_tokenizer
from .manifest import HYPERPARAMETERS, verify


@dataclass
class LoadedRun:
    """What ``transformers_lite.load(run_dir)`` returns. ``hyperparameters`` (the recorded settings)
    is read when first asked for: generating text needs only the model and its tokenizer."""

    # the family's model and config classes (``TransformerGenerator`` and ``GeneratorConfig``, ...): which
    # one a run holds is known when it is loaded, not before, so both are typed ``Any``
    model: Any
    config: Any
    tokenizers: dict[str, Tokenizer] = field(default_factory=dict)
    run_dir: Path = Path(".")
    trust_edited: bool = False  # files edited since training are used anyway (``--trust-edited``)

    @functools.cached_property
    def hyperparameters(self) -> dict[str, Any]:
        """The recorded settings; a run folder without its ``hyperparameters.json`` is a ``RunError`` naming
        it (not a run that recorded nothing). A run built in memory (no folder) has none. The file is
        checked against the manifest and its values by ``check_recorded``, as training checks them."""
        if not (self.run_dir / "config.json").is_file():
            return {}
        require(self.run_dir, "settings")
        path = self.run_dir / HYPERPARAMETERS
        hyper = read_json(path, "hyperparameters file")
        verify(self.run_dir, [HYPERPARAMETERS], self.trust_edited)
        if not isinstance(hyper, dict):
            raise RunError(f"{path}: damaged hyperparameters file (not a JSON object)")
        try:
            self.check_recorded(hyper)
        except ValueError as err:
            raise RunError(f"{path}: {err}; restore the file from a copy of the run") from None
        return hyper

    def check_recorded(self, hyper: dict[str, Any]) -> None:
        """A ``ValueError`` naming a recorded value training would refuse (``pipeline.Run`` checks them
        with the family's settings classes, ``settings.from_record``)."""
        if "seed" in hyper:  # a copy of train.seed that evaluate's validation split reads
            validate.seed("seed", hyper["seed"])
            train = hyper.get("train")
            if isinstance(train, dict) and "seed" in train and train["seed"] != hyper["seed"]:
                raise ValueError(f"seed {hyper['seed']!r} differs from the train section's seed {train['seed']!r}")
        validate.integer("total_steps", hyper.get("total_steps"), 0, optional=True)

    @property
    def tokenizer(self) -> Tokenizer:
        """The run's tokenizer (the target tokenizer of a translator)."""
        return self.tokenizers.get("tokenizer") or self.tokenizers["tgt_tokenizer"]

    @property
    def src_tokenizer(self) -> Tokenizer:
        return self.tokenizers.get("src_tokenizer") or self.tokenizers["tokenizer"]


def read_config(run_dir: Path) -> Config:
    path = run_dir / "config.json"
    if not path.is_file():
        raise RunError(f"{run_dir} is not a run directory (no config.json)")
    data = read_json(path, "model config")
    if not isinstance(data, dict):
        raise RunError(f"{path}: damaged model config (not a JSON object)")
    try:
        return config_from_dict(upgrade_config(data))
    except ValueError as err:
        raise RunError(f"{path}: {err}") from None


def load_tokenizers(run_dir: Path, family: str) -> dict[str, Tokenizer]:
    """The tokenizer files a run of ``family`` needs, each checked."""
    out = {}
    for name in CONFIGS[family].tokenizers:
        path = run_dir / f"{name}.json"
        if not path.is_file():
            raise RunError(f"{run_dir}: {path.name} is missing; the run cannot turn text into ids without it")
        out[name] = load_tokenizer(path, upgrade=upgrade_tokenizer(family))
    return out


def _check_vocabularies(run_dir: Path, config: Config, tokenizers: dict[str, Tokenizer]) -> None:
    for name, size_field in config.tokenizers.items():
        expected = getattr(config, size_field)
        if len(tokenizers[name]) != expected:
            raise RunError(
                f"{run_dir}: {name}.json has {len(tokenizers[name])} tokens but config.json expects a "
                f"vocabulary of {expected}"
            )


def read_weights(run_dir: str | Path) -> dict[str, torch.Tensor]:
    """A run's weights as tensors by name, without building its model (no random numbers drawn)."""
    run_dir = Path(run_dir)
    return upgrade_state_dict(read_config(run_dir).family)(read_tensors(weights_file(run_dir)))


def load(run_dir: str | Path, device: str | torch.device = "cpu", trust_edited: bool = False) -> LoadedRun:
    """Model (in eval mode), tokenizer(s) and config of a run directory, validated against each other
    and against the run's manifest (``trust_edited=True`` loads files edited after training)."""
    run_dir = Path(run_dir)
    require(run_dir, "load")  # every file a load reads is there, or the missing ones are named
    # each file is read first (a damaged one is named as damaged), then checked against the manifest
    config = read_config(run_dir)
    verify(run_dir, ["config.json"], trust_edited)
    tokenizers = load_tokenizers(run_dir, config.family)
    verify(run_dir, [f"{name}.json" for name in tokenizers], trust_edited)
    _check_vocabularies(run_dir, config, tokenizers)
    model = build_model(config)
    weights = weights_file(run_dir)
    load_weights(model, weights, upgrade=upgrade_state_dict(config.family))
    if weights.parent == run_dir:
        verify(run_dir, [weights.name], trust_edited)
    model.to(device).eval()
    return LoadedRun(model, config, tokenizers, run_dir, trust_edited)

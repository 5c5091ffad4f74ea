"""Safe checkpoints: tensors in safetensors, everything else in JSON, every write atomic.

Layout of a run directory::

    config.json  hyperparameters.json  history.json  model.safetensors  tokenizer*.json
    checkpoint/LATEST                  -> "step-00001200"
    checkpoint/step-00001200/          model.safetensors  optimizer.safetensors  state.json

A checkpoint is written into its own ``step-N`` folder and only then published by atomically
rewriting ``LATEST``; a crash (even SIGKILL) mid-save leaves ``LATEST`` pointing at the previous
complete checkpoint. Loading never unpickles anything.
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, load_model, save_file, save_model
from torch import nn

from ..config import Config, config_from_dict
from ..atomic import atomic_write, atomic_write_json, atomic_write_text

KEEP_CHECKPOINTS = 2


def save_weights(model: nn.Module, path: str | Path) -> None:
    """Model weights to safetensors (tied weights stored once), atomically."""
    atomic_write(path, lambda tmp: save_model(model, tmp))


def load_weights(model: nn.Module, path: str | Path) -> None:
    """Load safetensors weights, naming missing, unexpected or mis-shaped tensors."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights file not found: {path}")
    stored = load_file(path)
    expected = model.state_dict()
    problems = [f"{k}: file {tuple(v.shape)} vs model {tuple(expected[k].shape)}"
                for k, v in stored.items() if k in expected and v.shape != expected[k].shape]
    if not problems:
        missing, unexpected = load_model(model, path, strict=False)  # resolves tied weights stored once
        problems = [f"missing tensor {k}" for k in missing] + [f"unexpected tensor {k}" for k in unexpected]
    if problems:
        raise ValueError(f"{path} does not match the model config: {'; '.join(problems)}")


def _optimizer_to_files(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    sd = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for idx, state in sd["state"].items():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"state.{idx}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars.setdefault(str(idx), {})[key] = value
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def _optimizer_from_files(optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict) -> None:
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        _, idx, key = name.split(".", 2)
        state.setdefault(int(idx), {})[key] = value
    for idx, values in meta["scalars"].items():
        state.setdefault(int(idx), {}).update(values)
    groups = meta["param_groups"]
    for g in groups:
        if "betas" in g:
            g["betas"] = tuple(g["betas"])
    optimizer.load_state_dict({"state": state, "param_groups": groups})


def rng_state() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Python, NumPy and torch RNG states: tensors for safetensors, the rest for JSON."""
    version, internal, gauss = random.getstate()
    np_state = np.random.get_state()
    tensors = {"rng.torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = s
    meta = {"python": [version, list(internal), gauss],
            "numpy": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]), float(np_state[4])]}
    return tensors, meta


def set_rng_state(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    version, internal, gauss = meta["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = meta["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(tensors["rng.torch"])
    cuda = [tensors[k] for k in sorted(k for k in tensors if k.startswith("rng.cuda."))]
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(cuda)


def save_checkpoint(run_dir: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer,
                    state: dict[str, Any], rank_rng: list[torch.Tensor] | None = None) -> Path:
    """Write ``checkpoint/step-N`` (weights, optimizer, RNG, ``state``) and publish it via ``LATEST``."""
    root = Path(run_dir) / "checkpoint"
    name = f"step-{int(state['step']):08d}"
    folder = root / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    save_weights(model, folder / "model.safetensors")
    opt_tensors, opt_meta = _optimizer_to_files(optimizer)
    rng_tensors, rng_meta = rng_state()
    for r, s in enumerate(rank_rng or []):  # data-parallel ranks each have their own dropout stream
        rng_tensors[f"rng.torch.rank{r}"] = s
    atomic_write(folder / "optimizer.safetensors", lambda tmp: save_file({**opt_tensors, **rng_tensors}, tmp))
    atomic_write_json(folder / "state.json", {**state, "optimizer": opt_meta, "rng": rng_meta})
    atomic_write_text(root / "LATEST", name + "\n")
    for old in sorted(p for p in root.glob("step-*") if p.is_dir() and p.name != name)[:-(KEEP_CHECKPOINTS - 1) or None]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    latest = Path(run_dir) / "checkpoint" / "LATEST"
    if not latest.is_file():
        return None
    folder = latest.parent / latest.read_text().strip()
    return folder if (folder / "state.json").is_file() else None


def load_checkpoint(run_dir: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer | None,
                    rank: int = 0) -> dict[str, Any]:
    """Restore weights, optimizer and RNG states from the latest checkpoint; return its ``state``."""
    folder = latest_checkpoint(run_dir)
    if folder is None:
        raise ValueError(f"{run_dir} has no complete checkpoint to resume from")
    load_weights(model, folder / "model.safetensors")
    state = json.loads((folder / "state.json").read_text())
    tensors = load_file(folder / "optimizer.safetensors")
    if optimizer is not None:
        _optimizer_from_files(optimizer, {k: v for k, v in tensors.items() if k.startswith("state.")},
                              state["optimizer"])
    rng = {k: v for k, v in tensors.items() if k.startswith("rng.")}
    if f"rng.torch.rank{rank}" in rng:
        rng["rng.torch"] = rng[f"rng.torch.rank{rank}"]
    set_rng_state(rng, state["rng"])
    return state


@dataclass
class LoadedRun:
    """What ``transformers_lite.load(run_dir)`` returns."""

    model: nn.Module
    config: Config
    tokenizers: dict[str, Any] = field(default_factory=dict)
    task: str = ""
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    run_dir: Path = Path(".")

    @property
    def tokenizer(self) -> Any:
        return self.tokenizers.get("tokenizer")


def _vocab_checks(config: Config, tokenizers: dict[str, Any]) -> list[tuple[str, int, int]]:
    if config.family == "seq2seq":
        return [(name, getattr(config, f"{name.split('_')[0]}_vocab_size"), len(tokenizers[name]))
                for name in ("src_tokenizer", "tgt_tokenizer") if name in tokenizers]
    return [("tokenizer", config.vocab_size, len(tokenizers["tokenizer"]))] if "tokenizer" in tokenizers else []


def load(run_dir: str | Path, device: str | torch.device = "cpu") -> LoadedRun:
    """Model (in eval mode), tokenizer(s) and config of a run directory, validated against each other."""
    from ..models import build_model
    from ..tokenizers.index import load_tokenizer

    run_dir = Path(run_dir)
    if not (run_dir / "config.json").is_file():
        raise ValueError(f"{run_dir} is not a run directory (no config.json)")
    config = config_from_dict(json.loads((run_dir / "config.json").read_text()))
    hyper_path = run_dir / "hyperparameters.json"
    hyper = json.loads(hyper_path.read_text()) if hyper_path.is_file() else {}
    tokenizers = {p.stem: load_tokenizer(p) for p in sorted(run_dir.glob("*tokenizer.json"))}
    for name, expected, got in _vocab_checks(config, tokenizers):
        if expected != got:
            raise ValueError(f"{run_dir}: {name}.json has {got} tokens but config.json expects a vocabulary of {expected}")
    model = build_model(config)
    weights = run_dir / "model.safetensors"
    if not weights.is_file():
        folder = latest_checkpoint(run_dir)
        if folder is None:
            raise FileNotFoundError(f"{run_dir} has neither model.safetensors nor a checkpoint")
        weights = folder / "model.safetensors"
    load_weights(model, weights)
    model.to(device).eval()
    return LoadedRun(model, config, tokenizers, hyper.get("task", config.family), hyper, run_dir)

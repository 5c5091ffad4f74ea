"""Safe checkpoints: tensors in safetensors, everything else in JSON, every write atomic.

A checkpoint (model.safetensors, optimizer.safetensors, state.json) is written into its own
``checkpoint/step-N`` folder and only then published by atomically rewriting ``checkpoint/LATEST``;
a crash (even SIGKILL) mid-save leaves ``LATEST`` pointing at the previous complete checkpoint.
Optimizer states are stored by parameter *name*, so they survive a change in the order modules are
built. Loading never unpickles anything.

When the run's best evaluation (``callbacks.KeepBest``) is not the checkpoint's own step, its weights
lie beside it as ``best-step-N.safetensors``: a hard link to the file that already holds them where
the file system allows, so keeping them costs no copy.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ..atomic import atomic_write_json, atomic_write_text, read_json
from ..errors import RunError, warn
from ..runs.files import FORMAT, checkpoints, load_weights, read_tensors, save_tensors, save_weights
from ..runs.legacy import rename, rename_state

KEEP_CHECKPOINTS = 2


def _param_names(model: nn.Module, optimizer: torch.optim.Optimizer) -> list[str]:
    """Name of every optimizer parameter, in the flat order of its state dict."""
    names = {id(p): n for n, p in model.named_parameters()}
    return [names[id(p)] for group in optimizer.param_groups for p in group["params"]]


def _optimizer_to_files(model: nn.Module, optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    names = _param_names(model, optimizer)
    sd = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for idx, state in sd["state"].items():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"state.{names[idx]}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars.setdefault(names[idx], {})[key] = value
    groups = [{**g, "params": [names[i] for i in g["params"]]} for g in sd["param_groups"]]
    return tensors, {"param_groups": groups, "scalars": scalars}


def _optimizer_from_files(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    tensors: dict[str, torch.Tensor],
    meta: dict,
    where: Path,
    family: str,
) -> None:
    names = _param_names(model, optimizer)
    index = {n: i for i, n in enumerate(names)}
    tensors, meta = _upgrade_optimizer(tensors, meta, family)
    saved = [n for g in meta["param_groups"] for n in g["params"]]
    if sorted(saved) != sorted(names):
        diff = sorted(set(saved) ^ set(names))[:3]
        raise RunError(f"{where}: the optimizer state does not match the model (parameters {diff} differ)")
    state: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        name, _, field = key.removeprefix("state.").rpartition(".")
        state.setdefault(index[name], {})[field] = value
    for name, values in meta["scalars"].items():
        state.setdefault(index[name], {}).update(values)
    groups = []
    for g in meta["param_groups"]:
        # in the model's order: the optimizer pairs saved states with its parameters by position (an older
        # release built some modules in another order)
        group = {**g, "params": sorted(index[n] for n in g["params"])}
        if "betas" in group:
            group["betas"] = tuple(group["betas"])
        groups.append(group)
    optimizer.load_state_dict({"state": state, "param_groups": groups})


def _upgrade_optimizer(tensors: dict[str, torch.Tensor], meta: dict, family: str) -> tuple[dict, dict]:
    """Optimizer states saved under an older release's parameter names, under today's (``legacy``)."""
    fields: dict[str, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        name, _, field = key.removeprefix("state.").rpartition(".")
        fields.setdefault(field, {})[name] = value
    tensors = {f"state.{n}.{f}": v for f, by_name in fields.items() for n, v in rename_state(by_name, family).items()}
    groups = [
        {**g, "params": list(dict.fromkeys(rename(n, family) for n in g["params"]))} for g in meta["param_groups"]
    ]
    scalars: dict[str, dict[str, Any]] = {}
    for n, values in meta["scalars"].items():
        scalars.setdefault(rename(n, family), {}).update(values)
    return tensors, {**meta, "param_groups": groups, "scalars": scalars}


def rng_state() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Python, NumPy and torch RNG states: tensors for safetensors, the rest for JSON."""
    version, internal, gauss = random.getstate()
    np_state: Any = np.random.get_state()  # the legacy tuple
    tensors = {"rng.torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = s
    meta = {
        "python": [version, list(internal), gauss],
        "numpy": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]), float(np_state[4])],
    }
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


def save_checkpoint(
    run_dir: str | Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    state: dict[str, Any],
    rank_rng: list[torch.Tensor] | None = None,
    best_weights: dict[str, torch.Tensor] | None = None,
    best_file: Path | None = None,
) -> Path:
    """Write ``checkpoint/step-N`` (weights, optimizer, RNG, ``state``) and publish it via ``LATEST``.

    When ``state["best_step"]`` is another step, its weights go beside them (``best_file_name``): linked
    from ``best_file`` (a file that holds them already) when it exists, else written from ``best_weights``."""
    root = Path(run_dir) / "checkpoint"
    name = f"step-{int(state['step']):08d}"
    folder = root / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    save_weights(model, folder / "model.safetensors")
    opt_tensors, opt_meta = _optimizer_to_files(model, optimizer)
    rng_tensors, rng_meta = rng_state()
    for r, s in enumerate(rank_rng or []):  # data-parallel ranks each have their own dropout stream
        rng_tensors[f"rng.torch.rank{r}"] = s
    save_tensors({**opt_tensors, **rng_tensors}, folder / "optimizer.safetensors")
    best_step = state.get("best_step")
    if best_step is not None and best_step != state["step"]:
        _keep_best(folder / best_file_name(best_step), best_file, best_weights)
    atomic_write_json(folder / "state.json", {**state, "format": FORMAT, "optimizer": opt_meta, "rng": rng_meta})
    atomic_write_text(root / "LATEST", name + "\n")
    for old in sorted(p for p in root.glob("step-*") if p.is_dir() and not p.is_symlink() and p.name != name)[
        : -(KEEP_CHECKPOINTS - 1) or None
    ]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def best_file_name(step: int) -> str:
    """The file of a checkpoint that holds the weights of the best evaluation, at ``step``."""
    return f"best-step-{int(step):08d}.safetensors"


def _keep_best(path: Path, source: Path | None, weights: dict[str, torch.Tensor] | None) -> None:
    if source is not None and source.is_file():
        try:
            os.link(source, path)  # the same bytes: the file is never changed in place (writes are atomic renames)
            return
        except OSError:  # a file system without hard links
            pass
    if weights is not None:
        save_tensors(weights, path)


def load_checkpoint(
    run_dir: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer | None, rank: int = 0, family: str = ""
) -> dict[str, Any]:
    """Restore weights, optimizer and RNG states from the latest checkpoint; return its ``state``.

    A damaged checkpoint (unreadable state, weights or optimizer file) is skipped with a warning for
    the one before it, so one bad write costs the steps since that one, not the run."""
    found = checkpoints(run_dir)
    if not found:
        raise RunError(f"{run_dir} has no complete checkpoint to resume from")
    latest = Path(run_dir) / "checkpoint" / "LATEST"
    named = _named(latest)
    if named is not None and named != found[0].name and rank == 0:  # LATEST is rewritten below: said first
        warn(
            f"{latest} names {named!r}, which is no complete checkpoint of the run; resuming from the newest "
            f"complete one, {found[0].name}, which LATEST now names"
        )
        atomic_write_text(latest, found[0].name + "\n")
    for i, folder in enumerate(found):
        try:
            state = _load_from(folder, model, optimizer, rank, family)
        except RunError as err:
            if i + 1 == len(found):
                raise
            warn(f"{err}; resuming from the checkpoint before it, {found[i + 1].name}")
            continue
        if i and rank == 0:  # set the damaged ones aside, so neither LATEST nor pruning picks them again
            for damaged in found[:i]:
                aside = damaged.with_name(f"damaged-{damaged.name}")
                while aside.exists():
                    aside = aside.with_name(aside.name + "+")
                damaged.rename(aside)
            atomic_write_text(Path(run_dir) / "checkpoint" / "LATEST", folder.name + "\n")
        return state
    raise AssertionError("unreachable")


def _named(latest: Path) -> str | None:
    """What ``checkpoint/LATEST`` says (shortened), or None when there is no such file."""
    if not os.path.lexists(latest):
        return None
    try:
        return latest.read_bytes()[:80].decode("utf-8", "replace").strip()
    except OSError as err:
        return f"(unreadable: {err.strerror})"


def _load_from(
    folder: Path, model: nn.Module, optimizer: torch.optim.Optimizer | None, rank: int, family: str
) -> dict[str, Any]:
    state = read_json(folder / "state.json", "checkpoint state")
    if not isinstance(state, dict) or not {"step", "optimizer", "rng"} <= state.keys():
        raise RunError(f"{folder / 'state.json'}: damaged checkpoint state (fields missing)")
    if state.get("format", 0) < FORMAT:
        raise RunError(
            f"{folder} was written by transformers-lite 0.1 (optimizer states by position); it still "
            "loads for evaluate/generate/classify/translate, but cannot be resumed: start a new run"
        )
    load_weights(model, folder / "model.safetensors", upgrade=lambda t: rename_state(t, family))
    tensors = read_tensors(folder / "optimizer.safetensors")
    if optimizer is not None:
        states = {k: v for k, v in tensors.items() if k.startswith("state.")}
        _optimizer_from_files(model, optimizer, states, state["optimizer"], folder, family)
    best_step = state.get("best_step")
    if best_step is not None and best_step != state["step"] and (folder / best_file_name(best_step)).is_file():
        state["best_weights"] = rename_state(read_tensors(folder / best_file_name(best_step)), family)
    rng = {k: v for k, v in tensors.items() if k.startswith("rng.")}
    if f"rng.torch.rank{rank}" in rng:
        rng["rng.torch"] = rng[f"rng.torch.rank{rank}"]
    set_rng_state(rng, state["rng"])
    return state

"""``TrainState``: what the training loop carries from step to step, checkpointed in ``state.json`` (and the
best evaluation's weights beside it, ``callbacks.KeepBest``); and the random streams a training draws its
dropout from (``random_streams``), which a step abandoned midway and a race between runs set back."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import Any

import torch


@dataclass
class TrainState:
    """Everything the loop carries from step to step; checkpointed in ``state.json``."""

    step: int = 0
    elapsed: float = 0.0  # seconds of training so far, over all sessions of the run
    history: list[dict[str, Any]] = field(default_factory=list)
    best: float | None = None  # the best value of ``best_metric`` so far
    best_step: int | None = None  # the step of that evaluation
    best_metric: str | None = None  # what ``best`` measures (None: a checkpoint of 0.4 or earlier, val_loss)
    bad_evals: int = 0  # evaluations since the best one
    warmup_end_s: float | None = None  # elapsed seconds when warmup ended (the time-budget schedule starts there)
    warmup_steps: int | None = None  # the warmup fitted to a time budget from the first steps' speed (None: as set)
    budget_s: float | None = None  # the seconds of training a time budget allowed when the run began (``limits``)
    budget_minutes: float | None = None  # the --max-minutes that allowance was given for
    log: list[dict[str, Any]] = field(default_factory=list)  # a training-loss row every log_every steps
    running: dict[str, float] = field(
        default_factory=lambda: {"eval_sum": 0.0, "eval_n": 0, "log_sum": 0.0, "log_n": 0}
    )  # losses since the last row
    stop_reason: str | None = None
    # the weights of step ``best_step`` (CPU copies by name, tied weights once); in a checkpoint they are its
    # own model.safetensors (the best is its step) or a best-step-N.safetensors beside it, never in state.json
    best_weights: dict[str, torch.Tensor] | None = field(default=None, repr=False, compare=False)

    def add_loss(self, loss: float) -> None:
        r = self.running
        r["eval_sum"], r["eval_n"] = r["eval_sum"] + loss, r["eval_n"] + 1
        r["log_sum"], r["log_n"] = r["log_sum"] + loss, r["log_n"] + 1

    def mean_loss(self, since: str) -> float | None:
        """Mean training loss since the last evaluation (``"eval"``) or log row (``"log"``); resets it."""
        r = self.running
        total, n = r[f"{since}_sum"], r[f"{since}_n"]
        r[f"{since}_sum"], r[f"{since}_n"] = 0.0, 0
        return total / n if n else None

    def to_dict(self) -> dict[str, Any]:
        skip = ("stop_reason", "best_weights")  # the weights go to safetensors files, never to JSON
        return {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self) if f.name not in skip}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainState:
        keys = {"step", "elapsed", "history", "best", "best_step", "best_metric", "bad_evals", "warmup_end_s", "log"}
        keys |= {"warmup_steps", "running", "best_weights"}  # ``best_weights``: read by ``load_checkpoint``
        keys |= {"budget_s", "budget_minutes"}
        return cls(**{k: v for k, v in data.items() if k in keys})


def random_streams(device: torch.device | None = None) -> list[torch.Tensor]:
    """The state of the random streams dropout draws from: the CPU's, and the CUDA device's when training there."""
    if device is None or device.type != "cuda":
        return [torch.get_rng_state()]
    return [torch.get_rng_state(), torch.cuda.get_rng_state(device)]


def set_random_streams(streams: list[torch.Tensor], device: torch.device | None = None) -> None:
    """The streams back as ``random_streams`` gave them (nothing for an empty list)."""
    if streams:
        torch.set_rng_state(streams[0])
    if len(streams) > 1 and device is not None:
        torch.cuda.set_rng_state(streams[1], device)

"""AdamW with weight-decay groups, and the learning-rate schedule as a pure function.

Decay applies to matrices (linear and embedding weights); biases and LayerNorm parameters are not
decayed, as in GPT-2/nanoGPT. The schedule is a function of the step and the elapsed time, so
resuming needs only those two numbers, never a pickled scheduler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .settings import SCHEDULES


def make_optimizer(
    model: nn.Module,
    lr: float,
    weight_decay: float = 0.01,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    fused: bool | None = None,
) -> torch.optim.AdamW:
    """AdamW over two groups: matrices with ``weight_decay``, vectors (biases, norms) without."""
    seen: set[int] = set()
    decay, no_decay = [], []
    for p in model.parameters():
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if fused is None:  # fused kernels exist for CPU and CUDA float tensors in recent torch
        fused = all(p.dtype in (torch.float32, torch.bfloat16, torch.float16) for p in decay + no_decay)
    try:
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, fused=fused)
    except (RuntimeError, TypeError):
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps)


@dataclass(frozen=True)
class Schedule:
    """Learning rate as a pure function of the step and of the progress through the run's limits.

    Linear warmup over ``warmup_steps``; then ``constant``, ``inverse_sqrt`` (Noam), or ``cosine`` from
    the peak down to ``min_lr_ratio`` x peak. The cosine's progress is the fraction of the decay
    phase done, measured in steps when the run has a step limit (``total_steps``) and in wall-clock
    time when it has a time budget (``budget_s``); with both, whichever is further along. So a
    4-minute run decays over its 4 minutes however many steps the machine manages, and its last
    steps train at the floor. Resuming needs only the step and the elapsed time, both checkpointed.
    """

    kind: str = "cosine"
    lr: float = 1e-3
    warmup_steps: int = 100
    total_steps: int | None = 10_000
    min_lr_ratio: float = 0.1
    budget_s: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.kind!r}; choose one of {SCHEDULES}")
        if self.lr <= 0:
            raise ValueError(f"learning rate must be > 0, got {self.lr}")

    def progress(self, step: int, elapsed: float = 0.0, warmup_end_s: float | None = None) -> float:
        """Fraction of the decay phase done, in [0, 1]; ``warmup_end_s`` is when warmup ended."""
        warm = max(self.warmup_steps, 0)
        if step < warm:
            return 0.0
        done = []
        if self.total_steps is not None:
            done.append((step - warm) / max(self.total_steps - warm, 1))
        if self.budget_s is not None:
            start = warmup_end_s or 0.0
            done.append((elapsed - start) / max(self.budget_s - start, 1e-9))
        return min(max(max(done, default=0.0), 0.0), 1.0)

    def __call__(self, step: int, progress: float | None = None) -> float:
        """``lr`` before optimizer step ``step`` (0-based); ``progress`` defaults to the step fraction."""
        warm = max(self.warmup_steps, 0)
        if warm and step < warm:
            return self.lr * (step + 1) / warm  # linear warmup
        if self.kind == "constant":
            return self.lr
        if self.kind == "inverse_sqrt":  # Noam: peak at the end of warmup, then ~ 1/sqrt(step)
            return self.lr * math.sqrt(max(warm, 1) / max(step + 1, 1))
        p = self.progress(step) if progress is None else progress
        floor = self.lr * self.min_lr_ratio
        return floor + 0.5 * (self.lr - floor) * (1.0 + math.cos(math.pi * p))


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr

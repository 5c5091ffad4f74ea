"""AdamW with weight-decay groups, and learning-rate schedules as pure functions of the step.

Decay applies to matrices (linear and embedding weights); biases and LayerNorm parameters are not
decayed, as in GPT-2/nanoGPT. Schedules are functions ``lr(step)`` so that resuming needs only the
step number, never a pickled scheduler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

SCHEDULES = ("cosine", "inverse_sqrt", "constant")


def make_optimizer(model: nn.Module, lr: float, weight_decay: float = 0.01, betas: tuple[float, float] = (0.9, 0.999),
                   eps: float = 1e-8, fused: bool | None = None) -> torch.optim.AdamW:
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
    """``lr(step)`` for ``step`` = number of optimizer steps already taken (0-based)."""

    kind: str = "cosine"
    lr: float = 1e-3
    warmup_steps: int = 100
    total_steps: int = 10_000
    min_lr_ratio: float = 0.1

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.kind!r}; choose one of {SCHEDULES}")
        if self.lr <= 0:
            raise ValueError(f"learning rate must be > 0, got {self.lr}")

    def __call__(self, step: int) -> float:
        warm = max(self.warmup_steps, 0)
        if warm and step < warm:
            return self.lr * (step + 1) / warm  # linear warmup
        if self.kind == "constant":
            return self.lr
        if self.kind == "inverse_sqrt":  # Noam: peak at the end of warmup, then ~ 1/sqrt(step)
            return self.lr * math.sqrt(max(warm, 1) / max(step + 1, 1))
        span = max(self.total_steps - warm, 1)
        progress = min(max(step - warm, 0) / span, 1.0)
        floor = self.lr * self.min_lr_ratio
        return floor + 0.5 * (self.lr - floor) * (1.0 + math.cos(math.pi * progress))


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr

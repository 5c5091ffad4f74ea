"""The optimizer (AdamW, or Muon on the blocks' matrices) with weight-decay groups, and the
learning-rate schedule as a pure function.

Decay applies to matrices (linear and embedding weights); biases and LayerNorm parameters are not
decayed, as in GPT-2/nanoGPT. The schedule is a function of the step and the elapsed time, so
resuming needs only those two numbers, never a pickled scheduler.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..errors import warn
from ..settings import MUON_LR, OPTIMIZERS, SCHEDULES
from .muon import Muon
from .state import TrainState

_IN_A_BLOCK = re.compile(r"(^|\.)(blocks|decoder)\.\d+\.")  # encoder/GPT blocks, and a translator's decoder blocks


def muon_matrix(name: str, p: torch.Tensor) -> bool:
    """Whether Muon steps this parameter: a matrix inside a block (attention and feed-forward weights, the
    translator's decoder blocks included). Embedding tables, the output head, norms and biases stay with
    AdamW, as in the speedrun."""
    return p.dim() == 2 and _IN_A_BLOCK.search(name) is not None


def make_optimizer(
    model: nn.Module,
    lr: float,
    weight_decay: float = 0.01,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    fused: bool | None = None,
    plan: Mapping[str, tuple[float, int]] | None = None,
    kind: str = "adamw",
    muon_lr: float = MUON_LR,
) -> torch.optim.Optimizer:
    """AdamW over groups: matrices with ``weight_decay``, vectors (biases, norms) without. With
    ``kind="muon"`` the blocks' matrices (``muon_matrix``) are stepped by Muon at ``muon_lr`` (its group's
    ``lr_scale`` is ``muon_lr / lr``, so the schedule shapes both rates alike) and the rest by AdamW.

    ``plan`` maps a parameter name to ``(lr_scale, frozen_until)``: its learning rate is the schedule's
    times ``lr_scale``, and zero before step ``frozen_until`` (fine-tuning: layer-wise decay and a frozen
    encoder while a new head warms up). Parameters it does not name get ``(1.0, 0)``.
    """
    if kind not in OPTIMIZERS:
        raise ValueError(f"optimizer={kind!r}: choose one of {', '.join(OPTIMIZERS)}")
    seen: set[int] = set()
    muon = kind == "muon"
    buckets: dict[tuple[bool, float, int, bool], list[nn.Parameter]] = {
        (True, 1.0, 0, False): [],
        (False, 1.0, 0, False): [],
    }
    for name, p in model.named_parameters():
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        scale, frozen = (plan or {}).get(name, (1.0, 0))
        orthogonal = muon and muon_matrix(name, p)
        if orthogonal:
            scale = scale * muon_lr / lr
        buckets.setdefault((p.dim() >= 2, float(scale), int(frozen), orthogonal), []).append(p)
    groups: list[dict[str, Any]] = [
        {
            "params": params,
            "weight_decay": weight_decay if decay else 0.0,
            "lr_scale": scale,
            "frozen_until": frozen,
            **({"muon": orthogonal} if muon else {}),
        }
        for (decay, scale, frozen, orthogonal), params in sorted(
            buckets.items(), key=lambda kv: (kv[0][3], not kv[0][0], -kv[0][1], kv[0][2])
        )
        if params or not orthogonal
    ]
    if muon:
        return Muon(groups, lr=lr, betas=betas, eps=eps)
    params = [p for g in groups for p in g["params"]]
    if fused is None:  # fused kernels exist for CPU and CUDA float tensors in recent torch
        fused = all(p.dtype in (torch.float32, torch.bfloat16, torch.float16) for p in params)
    try:
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, fused=fused)
    except (RuntimeError, TypeError):
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps)


def fitted_warmup(warmup_steps: int, total_steps: int | None, expected: bool = False) -> int:
    """The warmup a run of ``total_steps`` gets: as asked, unless it would spend more than a quarter of
    the run warming up (a recipe's 300 warmup steps in a ``--max-steps 300`` run never reach the peak
    rate); then a tenth of the run, with a warning saying so. ``expected``: ``total_steps`` is what a
    time budget buys at the speed measured so far."""
    if total_steps is None or warmup_steps <= total_steps // 4:
        return warmup_steps
    fitted = max(1, total_steps // 10)
    if fitted >= warmup_steps:
        return warmup_steps
    steps = (
        f"the about {total_steps} steps this run's time budget buys at its speed"
        if expected
        else f"this run's {total_steps} steps"
    )
    warn(
        f"warmup_steps={warmup_steps} would spend {min(warmup_steps / total_steps, 1):.0%} of {steps} "
        f"warming up; warming up for {fitted} steps instead (a tenth of the run)"
    )
    return fitted


def warn_if_cut_short(state: TrainState, warmup_steps: int, lr: float, steps_per_epoch: int) -> None:
    """At a run's end (not a pause): warn when its schedule did little of use. A run that ended still
    warming up never trained at its peak ``lr``; a run whose time budget ran out within its first epoch
    never saw part of its training data (a model too large or a machine too busy for the minutes)."""
    if state.warmup_end_s is None:
        warn(
            f"training ended at step {state.step}, still warming up (warmup: {warmup_steps} steps): the learning "
            f"rate never reached its peak {lr:g}; give more time or steps, or fewer --warmup-steps"
        )
    if (state.stop_reason or "").startswith("time budget") and state.step < steps_per_epoch:
        part = state.step / steps_per_epoch
        warn(
            f"the time budget ran out at step {state.step:,}, {part:.0%} of one epoch ({steps_per_epoch:,} steps): "
            f"the model saw at most {part:.0%} of its training data; give more minutes or train a "
            "smaller model"
        )


@dataclass(frozen=True)
class Schedule:
    """Learning rate as a pure function of the step and of the progress through the run's limits.

    Linear warmup over ``warmup_steps``; then ``constant``, ``inverse_sqrt`` (Noam), ``cosine`` from
    the peak down to ``min_lr_ratio`` x peak, or ``wsd`` (warmup, stable, decay): the peak until the last
    ``cooldown`` of the run, then a straight line down to the floor. The decay's progress is the fraction of the decay
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
    cooldown: float = 0.4

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
        if self.kind == "wsd":  # flat, then linear over the last `cooldown` of the run
            left = 1.0 - p
            return self.lr if left >= self.cooldown else floor + (self.lr - floor) * left / max(self.cooldown, 1e-12)
        return floor + 0.5 * (self.lr - floor) * (1.0 + math.cos(math.pi * p))


def set_lr(optimizer: torch.optim.Optimizer, lr: float, step: int | None = None) -> None:
    """Every group's rate for the coming step: ``lr`` times its ``lr_scale``, zero while ``step`` is
    before its ``frozen_until`` (AdamW then moves nothing: the update and the decay both scale with lr)."""
    for group in optimizer.param_groups:
        frozen = step is not None and step < group.get("frozen_until", 0)
        group["lr"] = 0.0 if frozen else lr * group.get("lr_scale", 1.0)

"""Muon: momentum whose update is orthogonalised, for the blocks' matrices; AdamW for everything else.

For a weight matrix ``W (m, n)`` with momentum ``M`` (a running mean of its gradients), Muon steps by
``-lr · s · orth(M)``, where ``orth(M) = U Vᵀ`` for ``M = U Σ Vᵀ``: every singular value of the update is
1 ("flat"), so the few directions that dominate a gradient no longer drown the rest, and the step's
size no longer depends on how large the gradient is. ``s = sqrt(max(1, m / n))`` keeps a tall matrix's
per-element step the size of a square one's.

``U Vᵀ`` is approximated without an SVD by a few Newton–Schulz iterations (``newton_schulz``, derived in
docs/training.md): after scaling ``X = M / ‖M‖_F`` (all singular values in (0, 1]), the odd polynomial
``X ← aX + b(XXᵀ)X + c(XXᵀ)²X`` acts on each singular value alone (``σ ← aσ + bσ³ + cσ⁵``) and pushes every
one of them towards 1. The coefficients ``(3.4445, -4.7750, 2.0315)`` are the speedrun's: they trade an
exact fixed point for speed (singular values end in roughly [0.7, 1.2] after 5 steps, which trains as
well). Here it runs in float32, on every torch the project supports.

The optimizer is one ``torch.optim.Optimizer``: groups with ``muon=True`` get the rule above (with
decoupled weight decay), the others AdamW, so checkpoints, the schedule (``set_lr``) and the
fine-tuning plan treat it as any optimizer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor

COEFFICIENTS = (3.4445, -4.7750, 2.0315)
MOMENTUM = 0.95
NS_STEPS = 5


def newton_schulz(g: Tensor, steps: int = NS_STEPS, eps: float = 1e-7) -> Tensor:
    """An approximation of ``U Vᵀ`` for ``g = U Σ Vᵀ`` (``(m, n)``), same shape as ``g``: in float32, or in
    float64 for a float64 ``g`` (the exercises check in float64)."""
    a, b, c = COEFFICIENTS
    x = g if g.dtype == torch.float64 else g.float()
    tall = x.shape[-2] > x.shape[-1]
    if tall:  # iterate on the wide side: X Xᵀ is then the smaller (min(m, n), min(m, n)) matrix
        x = x.mT
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + eps)  # every singular value now in (0, 1]
    for _ in range(steps):
        gram = x @ x.mT  # (r, r), r = min(m, n)
        poly = b * gram + c * (gram @ gram)  # (r, r)
        x = a * x + poly @ x  # (r, max(m, n)): each σ -> aσ + bσ³ + cσ⁵
    return x.mT if tall else x


def shape_scale(p: Tensor) -> float:
    """``sqrt(max(1, m / n))`` for a ``(m, n)`` matrix."""
    return math.sqrt(max(1.0, p.shape[-2] / p.shape[-1]))


class Muon(torch.optim.Optimizer):
    """Muon on the groups marked ``muon=True`` (2-D parameters), AdamW on the rest."""

    def __init__(
        self,
        groups: Iterable[dict[str, Any]],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.99),
        eps: float = 1e-8,
        momentum: float = MOMENTUM,
    ) -> None:
        super().__init__(
            list(groups),
            {"lr": lr, "betas": betas, "eps": eps, "momentum": momentum, "muon": False, "weight_decay": 0.0},
        )
        for group in self.param_groups:
            if group["muon"] and any(p.dim() != 2 for p in group["params"]):
                shapes = [tuple(p.shape) for p in group["params"] if p.dim() != 2]
                raise ValueError(f"Muon orthogonalises matrices only; got parameters of shapes {shapes}")

    @torch.no_grad()
    def step(self, closure: None = None) -> None:  # type: ignore[override]  # no closure: one gradient per step
        for group in self.param_groups:
            lr, wd = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if group["muon"]:
                    update = self._muon(p, state, group["momentum"])
                else:
                    update = self._adam(p, state, group["betas"], group["eps"])
                p.mul_(1 - lr * wd)  # decoupled weight decay, as AdamW
                p.add_(update, alpha=-lr)

    @staticmethod
    def _muon(p: Tensor, state: dict[str, Any], beta: float) -> Tensor:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = torch.zeros_like(p)
        grad = p.grad
        assert grad is not None  # step() skips parameters without one
        buf.lerp_(grad, 1 - beta)  # M ← βM + (1-β)g
        nesterov = grad.lerp(buf, beta)  # look ahead: (1-β)g + βM
        return newton_schulz(nesterov).to(p.dtype) * shape_scale(p)

    @staticmethod
    def _adam(p: Tensor, state: dict[str, Any], betas: tuple[float, float], eps: float) -> Tensor:
        if not state:
            state["step"] = torch.zeros((), dtype=torch.float32)
            state["exp_avg"] = torch.zeros_like(p)
            state["exp_avg_sq"] = torch.zeros_like(p)
        state["step"] += 1
        t = float(state["step"])
        b1, b2 = betas
        state["exp_avg"].lerp_(p.grad, 1 - b1)
        state["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
        denom = (state["exp_avg_sq"] / (1 - b2**t)).sqrt_().add_(eps)
        return state["exp_avg"] / (1 - b1**t) / denom

"""An exponential moving average of the weights, kept in the optimizer's own state.

After step ``t`` every trained parameter's average moves towards it, ``a ← a + (1 - d_t)(w - a)``, with
``d_t = min(decay, (1 + t) / (10 + t))``: the first averages forget the random start quickly, later
ones average over about ``1 / (1 - decay)`` steps. The average lives in ``optimizer.state[p]["ema"]``, so
checkpoints carry it (by parameter name, as every optimizer state) and resuming stays exact without a
second file. ``averaged`` swaps it into the model for evaluation and for the saved weights, and back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

KEY = "ema"


def decay_at(decay: float, step: int) -> float:
    """``d_t`` for the average taken after optimizer step ``step`` (1-based)."""
    return min(decay, (1 + step) / (10 + step))


@torch.no_grad()
def update_average(optimizer: torch.optim.Optimizer, decay: float, step: int) -> None:
    """Move every parameter's average towards its weights (the first call starts it at the weights)."""
    d = decay_at(decay, step)
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state[p]
            if KEY not in state:
                state[KEY] = p.detach().clone()
            else:
                state[KEY].lerp_(p.detach(), 1 - d)


@contextlib.contextmanager
def averaged(optimizer: torch.optim.Optimizer, enabled: bool = True) -> Iterator[None]:
    """Within the block the model holds the averaged weights (where an average exists); after it, its own."""
    swapped = []
    if enabled:
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    average = optimizer.state[p].get(KEY)
                    if average is not None:
                        kept = p.detach().clone()
                        p.copy_(average)
                        swapped.append((p, kept))
    try:
        yield
    finally:
        with torch.no_grad():
            for p, kept in swapped:
                p.copy_(kept)

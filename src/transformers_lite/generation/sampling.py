"""Turning next-token logits into a token: temperature, top-k, top-p (nucleus), greedy.

Shapes: B batch, V vocabulary. All functions take logits ``(B, V)``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import validate


def filter_logits(logits: Tensor, top_k: int | None = None, top_p: float | None = None) -> Tensor:
    """Set to -inf every logit outside the ``top_k`` largest and outside the smallest set whose
    probability mass reaches ``top_p``."""
    if top_k is not None and top_k > 0 and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and 0.0 < top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=True, dim=-1)  # (B, V)
        cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
        drop_sorted = cumulative - torch.softmax(sorted_logits, dim=-1) >= top_p  # mass before this token >= p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def check_sampling(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """``ConfigError`` for settings that would be ignored or break sampling (each named)."""
    validate.number("temperature", temperature, 0)
    validate.integer("top_k", top_k, 1, optional=True)
    validate.number("top_p", top_p, 0, 1, low_open=True, optional=True)


def sample_next(logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                generator: torch.Generator | None = None) -> Tensor:
    """Next token ids ``(B,)``: greedy (argmax) when ``temperature`` is 0, else a sample."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(filter_logits(logits.float() / temperature, top_k, top_p), dim=-1)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)

"""Turning next-token logits into a token: temperature, top-k, top-p (nucleus), greedy.

Shapes: B batch, V vocabulary. All functions take logits ``(B, V)``.
"""

from __future__ import annotations

import random

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


def sample_rows(
    logits: Tensor, temperature: float, top_k: int | None, top_p: float | None, generators: list[random.Random]
) -> Tensor:
    """Next token ids ``(B,)``: greedy (argmax) when ``temperature`` is 0, else one draw per row.

    Row ``b`` inverts its cumulative distribution at a uniform number from ``generators[b]`` (a
    ``random.Random``): each row consumes its own random stream, one number per token, whatever else
    the batch holds, on any device.
    """
    if temperature == 0:
        return logits.argmax(dim=-1)
    scaled = logits.float() if temperature == 1 else logits.float() / temperature
    probs = torch.softmax(filter_logits(scaled, top_k, top_p), dim=-1)  # (B, V)
    u = torch.tensor([g.random() for g in generators], dtype=probs.dtype, device=probs.device)  # (B,)
    cdf = probs.cumsum(dim=-1)  # (B, V)
    index = torch.searchsorted(cdf, (u * cdf[:, -1])[:, None], side="right")  # (B, 1): first class with cdf > u
    return index.squeeze(-1).clamp_(max=probs.shape[-1] - 1)


def sample_next(
    logits: Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: random.Random | None = None,
) -> Tensor:
    """Next token ids ``(B,)`` for one batch with one generator (``sample_rows`` with the same stream)."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    generator = generator or random.Random(0)
    return sample_rows(logits, temperature, top_k, top_p, [generator] * logits.shape[0])

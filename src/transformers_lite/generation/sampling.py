"""Turning next-token logits into a token: temperature, top-k, top-p (nucleus), greedy.

Any finite temperature ``>= 0`` is safe: the logits are shifted so that each row's maximum is 0 before
they are divided, so a tiny temperature sends the others to ``-inf`` (the draw becomes the argmax)
instead of overflowing into ``inf - inf`` = NaN probabilities.

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
        drop_sorted[..., 0] = False  # the most likely token always stays (a top_p below float32's range is 0)
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


_SMALLEST = float(torch.finfo(torch.float32).tiny)  # smallest normal float32: a temperature below acts as it


def check_sampling(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """``ConfigError`` for settings that would be ignored or break sampling (each named)."""
    validate.number("temperature", temperature, 0)
    validate.integer("top_k", top_k, 1, optional=True)
    validate.number("top_p", top_p, 0, 1, low_open=True, optional=True)


def scale(logits: Tensor, temperature: float) -> Tensor:
    """``logits / temperature`` up to a constant per row (softmax and top-k/top-p ignore it): every value
    ``<= 0`` and each row's maximum exactly 0, so the result holds no NaN and no ``+inf`` whatever the
    positive temperature. A temperature below float32's smallest normal number acts as that number
    (it would round to 0 and divide by zero); both give the argmax."""
    logits = logits.float()
    shifted = logits - logits.amax(dim=-1, keepdim=True)  # (B, V) <= 0
    return shifted if temperature == 1 else shifted / max(temperature, _SMALLEST)


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
    scaled = scale(logits, temperature)  # (B, V)
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
    check_sampling(temperature, top_k, top_p)
    generator = generator or random.Random(0)
    return sample_rows(logits, temperature, top_k, top_p, [generator] * logits.shape[0])

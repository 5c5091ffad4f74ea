"""Autoregressive generation for the character GPT, with and without a KV cache.

Both paths condition every prediction on the same window of tokens, so with the same random seed they
produce the same text:

* While the text fits the context, the window is the whole text. The cached path runs the prompt
  once (``prefill``) and then one token per step (``decode_one_token``).
* Once the text outgrows the context ``T``, the window slides: it restarts from the last
  ``T - stride + 1`` tokens (``stride`` = ``T // 4`` by default) and grows again until it is full. The
  cached path refills its cache from that window at each restart, so it pays a full forward only
  once every ``stride`` tokens instead of at every token. ``stride=1`` gives the classic "last T
  tokens" window (then the cache cannot help beyond the context).
"""

from __future__ import annotations

from typing import Iterator

import torch
from torch import Tensor, nn

from .sampling import check_sampling, sample_next


def window_start(length: int, context: int, stride: int) -> int:
    """First token of the conditioning window for a text of ``length`` tokens.

    Up to ``context`` tokens the window is everything. Beyond, its length cycles through
    ``context - stride + 1, ..., context``: each restart keeps the last ``context - stride + 1``
    tokens, and the window then grows by one token per step until it is full again.
    """
    if length <= context:
        return 0
    width = context - stride + 1 + (length - context - 1) % stride
    return length - width


@torch.no_grad()
def prefill(model: nn.Module, ids: Tensor, cache) -> Tensor:  # noqa: ANN001
    """Run the window ``ids (B, T)`` through the model filling ``cache``; return last logits ``(B, V)``."""
    for c in cache:
        c.reset()
    return model(ids, cache=cache, last_only=True)[:, -1]


@torch.no_grad()
def decode_one_token(model: nn.Module, token: Tensor, cache) -> Tensor:  # noqa: ANN001
    """Feed one new token ``(B, 1)``; return next-token logits ``(B, V)``."""
    return model(token, cache=cache, last_only=True)[:, -1]


@torch.no_grad()
def generate_tokens(model: nn.Module, prompt: Tensor, max_new_tokens: int, *, temperature: float = 1.0,
                    top_k: int | None = None, top_p: float | None = None, seed: int | None = None,
                    use_cache: bool = True, stride: int | None = None) -> Iterator[int]:
    """Yield ``max_new_tokens`` new token ids after ``prompt (T,)`` (batch of one), one at a time."""
    check_sampling(temperature, top_k, top_p)
    context = model.config.max_length
    stride = max(1, context // 4) if stride is None else stride
    if not 1 <= stride <= context:
        raise ValueError(f"stride must be in 1..{context}, got {stride}")
    if prompt.dim() != 1 or len(prompt) == 0:
        raise ValueError("the prompt must be a non-empty 1-D tensor of token ids")
    device = next(model.parameters()).device
    generator = torch.Generator(device=device)
    generator.manual_seed(0 if seed is None else seed)
    model.eval()
    tokens = prompt.tolist()
    cache = model.new_cache(1) if use_cache else None
    cached_from = None  # window start the cache currently holds
    for _ in range(max_new_tokens):
        start = window_start(len(tokens), context, stride)
        if not use_cache:
            logits = model(torch.tensor([tokens[start:]], device=device), last_only=True)[:, -1]
        elif cached_from != start:
            logits = prefill(model, torch.tensor([tokens[start:]], device=device), cache)
            cached_from = start
        else:
            logits = decode_one_token(model, torch.tensor([[tokens[-1]]], device=device), cache)
        nxt = int(sample_next(logits, temperature, top_k, top_p, generator)[0])
        tokens.append(nxt)
        yield nxt

"""Autoregressive generation for the character GPT: a batch of samples, with or without a KV cache.

Every path conditions each prediction on the same window of tokens, so with the same random seed
they produce the same text:

* While the text fits the context, the window is the whole text: the prompt runs once (prefill),
  then one token per step.
* Once the text outgrows the context ``T``, the window slides: it restarts from the last
  ``T - stride + 1`` tokens (``stride`` = ``T // 4`` by default) and grows again until it is full; the
  cache is refilled from that window at each restart, a full forward once every ``stride`` tokens.
  ``stride=1`` gives the classic "last T tokens" window (post 004's), where a cache cannot help.

Two paths through the same forward: ``"cache"`` (the default: the model's own modules with a
preallocated ``KVCache``, one new token per step) and ``"no-cache"`` (the whole window every token);
tests check that they give the same tokens.

Random seeds: sample ``i`` of ``num_samples`` draws from its own generator (Python's
``random.Random(seed + i)``), one uniform number per token (inverse-CDF sampling), so it is the text
an unbatched run with random seed ``seed + i`` gives.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from .. import validate
from .sampling import check_sampling, sample_rows

if TYPE_CHECKING:
    from ..models.generator import TransformerGenerator

PATHS = ("cache", "no-cache")


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


class _CachedDecoder:
    """The model's forward with a KV cache: ``step`` feeds the tokens after those cached. The weights are
    read once (``model.weights(detach=True)``) and handed to the forward's ``run`` at every token."""

    def __init__(self, model: TransformerGenerator, batch: int) -> None:
        self.model, self.cache, self.weights = model, model.new_cache(batch), model.weights(detach=True)

    def step(self, ids: Tensor) -> Tensor:
        return self.model.run(self.weights, ids, cache=self.cache, last_only=True)[:, -1]  # (B, V)

    def reset(self) -> None:
        self.cache.reset()


# bounds that keep the token buffer (num_samples x (prompt + new tokens) ids) allocatable: a larger
# request is refused by name instead of failing inside torch or running for days
MAX_NEW_TOKENS = 1_000_000
MAX_SAMPLES = 10_000
MAX_IDS = 100_000_000


@torch.inference_mode()
def generate(
    model: TransformerGenerator,
    prompt: Tensor,
    max_new_tokens: int,
    *,
    num_samples: int = 1,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    stride: int | None = None,
    path: str = "cache",
) -> Iterator[list[int]]:
    """Yield, ``max_new_tokens`` times, the next token of each of ``num_samples`` continuations of
    ``prompt (T,)``: a list of ``num_samples`` ids per step."""
    check_sampling(temperature, top_k, top_p)
    validate.seed("seed", seed, optional=True)
    validate.integer("max_new_tokens", max_new_tokens, 0, high=MAX_NEW_TOKENS)
    validate.integer("num_samples", num_samples, 1, high=MAX_SAMPLES)
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    if not getattr(model.config, "causal", True):
        path = "no-cache"  # a model trained without the causal mask reads its whole window every step
    context = model.config.max_length
    stride = max(1, context // 4) if stride is None else stride
    if not 1 <= stride <= context:
        raise ValueError(f"stride must be in 1..{context}, got {stride}")
    if prompt.dim() != 1 or len(prompt) == 0:
        raise ValueError("the prompt must be a non-empty 1-D tensor of token ids")
    if num_samples * (len(prompt) + max_new_tokens) > MAX_IDS:
        raise ValueError(
            f"num_samples x (prompt + max_new_tokens) = {num_samples:,} x {len(prompt) + max_new_tokens:,} token "
            f"ids is more than {MAX_IDS:,}; ask for fewer samples or tokens"
        )
    device = next(model.parameters()).device
    base = 0 if seed is None else seed
    generators = [random.Random(base + i) for i in range(num_samples)]
    model.eval()
    length = len(prompt)
    tokens = torch.empty(num_samples, length + max_new_tokens, dtype=torch.long, device=device)  # (B, T + new)
    tokens[:, :length] = prompt.to(device)
    decoder = None if path == "no-cache" else _CachedDecoder(model, num_samples)
    cached_from = None  # window start the cache holds
    for _ in range(max_new_tokens):
        start = window_start(length, context, stride)
        if decoder is None:
            logits = model(tokens[:, start:length], last_only=True)[:, -1]
        elif cached_from != start:  # (re)fill the cache from the window
            decoder.reset()
            logits = decoder.step(tokens[:, start:length])
            cached_from = start
        else:
            logits = decoder.step(tokens[:, length - 1 : length])
        nxt = sample_rows(logits, temperature, top_k, top_p, generators)  # (B,)
        tokens[:, length] = nxt
        length += 1
        yield nxt.tolist()


def generate_tokens(
    model: TransformerGenerator,
    prompt: Tensor,
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    use_cache: bool = True,
    stride: int | None = None,
    path: str | None = None,
) -> Iterator[int]:
    """Yield ``max_new_tokens`` new token ids after ``prompt (T,)``, one sample (see ``generate``)."""
    chosen = path or ("cache" if use_cache else "no-cache")
    for row in generate(
        model,
        prompt,
        max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        stride=stride,
        path=chosen,
    ):
        yield row[0]

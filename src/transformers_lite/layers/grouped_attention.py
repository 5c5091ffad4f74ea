"""Grouped-query attention (Ainslie et al. 2023; Llama 2 70B, Llama 3, Mistral): ``kv_heads=G`` heads of
keys and values, each read by ``H / G`` heads of queries; ``kv_heads=1`` is multi-query attention
(Shazeer 2019). The model computes and a KV cache holds G heads of keys and values instead of H, so
decoding reads ``H / G`` times fewer of them.

Notation as in ``attention``: B batch, T query length, S key length, C channels, H query heads, G key/value
heads, D = C / H the head size. The one Dense is ``(C + 2·G·D, C)``, rows ``[W_Q; W_K; W_V]``. Traced,
the keys and values are repeated to H heads (``k_repeated``, ``v_repeated``: kind ``repeat_heads``,
``K̃ = repeat_interleave(K, H / G)``, head h reading key head ``h // (H / G)``) before the scores, so every
later step is multi-head attention's; untraced, the fused kernel reads the G heads as they are
(``enable_gqa``). Not in the posts: every post gives each head its own keys and values.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch.nn.functional as F
from torch import Tensor

from .attention import Attention, AttentionWeights, attend, positioned, split_heads
from .attention_steps import attention_steps
from .kv_cache import KVCache
from .norms import NormSpec
from .rotary import RotaryEmbedding
from .steps import Step
from .trace import NO_TRACE, Trace


def grouped_self_attention(
    x: Tensor,
    w: AttentionWeights,
    n_heads: int,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    cache: KVCache | None = None,
    layer: int = 0,
    rope: RotaryEmbedding | None = None,
    qk_norm: NormSpec | None = None,
    values: list[Tensor] | None = None,
    trace: Trace = NO_TRACE,
) -> Tensor:
    """``self_attention`` with G heads of keys and values (G read from the weights' shape): ``x (B, T, C)``
    -> ``(B, T, C)``; the cache holds ``(B, G, N, D)`` keys and values per block."""
    dim = w.out.shape[1]  # H·D
    groups = (w.qkv.shape[0] - dim) // (2 * (dim // n_heads))
    qkv = F.linear(x, w.qkv, w.qkv_bias)  # (B, T, C) @ (C, C + 2·G·D) -> (B, T, C + 2·G·D)
    q = split_heads(qkv[..., :dim], 1, n_heads)[0]  # (B, H, T, D)
    kv = split_heads(qkv[..., dim:], 2, groups)  # (2, B, G, T, D)
    if cache is not None and not trace.active and rope is None and qk_norm is None and values is None:
        k, v = cache.update(layer, kv)  # decoding: G heads to the cache
        return attend(q, k, v, mask, causal, w, trace)
    q, k, v = positioned(x, q, kv[0], kv[1], w, cache, layer, rope, qk_norm, values, trace)
    if trace.active:  # the explicit path: each key/value head repeated for the H / G query heads sharing it
        k = trace("k_repeated", k.repeat_interleave(n_heads // groups, dim=1), k)  # (B, G, S, D) -> (B, H, S, D)
        v = trace("v_repeated", v.repeat_interleave(n_heads // groups, dim=1), v)
    return attend(q, k, v, mask, causal, w, trace)


def grouped_steps(steps: dict[str, Step], dim: int, n_heads: int, kv_heads: int) -> dict[str, Step]:
    """Multi-head attention's ``steps`` with G heads of keys and values: K and V cut into G heads from
    their rows of the Dense (and normalised, rotated or mixed as G heads), then repeated to H."""
    d, r = dim // n_heads, n_heads // kv_heads
    shared = f"split into G = {kv_heads} key/value heads of d_h = {d}, each shared by H / G = {r} query heads"
    out = dict(steps)
    out["q"] = replace(steps["q"], computes=steps["q"].computes.replace("one third", "one part"))  # not a third
    for part, name in ((1, "k"), (2, "v")):
        start = dim + (part - 1) * kv_heads * d
        s = steps[name]
        out[name] = replace(
            s,
            axes="G" + s.axes[1:],
            ours=s.ours.replace(f"split into H = {n_heads} heads of d_h = {d}", shared),
            post=None,  # every post gives each head its own keys and values
            rows=(start, start + kv_heads * d),
            computes=s.computes.replace("one third", "one part").replace(
                f"split into H = {n_heads} heads of d_h = {d}", shared
            ),
        )
    for name in ("v_mixed", "k_norm", "k_rotated"):
        if name in out:
            out[name] = replace(out[name], axes="G" + out[name].axes[1:])
    keys = "S" if steps["k"].axes[1] == "S" else "T"
    k_ = "K" + ("\u0302" if "k_norm" in steps else "") + ("′" if "k_rotated" in steps else "")  # as the scores read it
    for letter, name, read in (("K", "k_repeated", k_), ("V", "v_repeated", "V")):
        out[name] = Step(
            "repeat_heads",
            f"H{keys}D",
            f"{letter}̃ = repeat_interleave({read}, {r}): query head h reads key/value head h // {r}",
            None,
            f"the {kv_heads} {'key' if letter == 'K' else 'value'} heads, each repeated for the {r} query heads "
            "that share it",
            computes=f"each of the G = {kv_heads} heads repeated H / G = {r} times, so that the H = {n_heads} query "
            "heads each read one",
        )
    # the scores read the repeated keys, the heads the repeated values (the posts' column: their own K and V, as
    # a step the posts compute on another input is quoted with theirs)
    for name in ("scores", "scaled"):
        out[name] = replace(steps[name], ours=steps[name].ours.replace(f"{k_}ᵀ", "K̃ᵀ"))
    out["heads"] = replace(steps["heads"], ours="A = P Ṽ")
    return out


class GroupedQueryAttention(Attention):
    """``kv_heads`` heads of keys and values shared by ``n_heads`` heads of queries (``kv_heads`` must divide
    ``n_heads``; 1 is multi-query attention)."""

    about = "grouped-query attention (fewer key/value heads than query heads; GPT-2 has one per head)"
    equations = staticmethod(grouped_self_attention)
    grouped = True

    def __init__(self, n_heads: int, dim: int, *, kv_heads: int | None = None, **settings: Any) -> None:  # noqa: ANN401
        groups = n_heads if kv_heads is None else kv_heads
        if groups < 1 or n_heads % groups:
            raise ValueError(f"kv_heads={kv_heads} must divide n_heads={n_heads} (1: multi-query attention)")
        super().__init__(n_heads, dim, kv_heads=groups, **settings)

    def declare_steps(self, dim: int, n_heads: int, **settings: Any) -> dict[str, Step]:  # noqa: ANN401
        return grouped_steps(attention_steps(dim, n_heads, **settings), dim, n_heads, self.kv_heads)

    def extra_repr(self) -> str:
        return f"num_heads={self.n_heads}, kv_heads={self.kv_heads}, head_size={self.dim_head}, {self.dim}=>{self.dim}"

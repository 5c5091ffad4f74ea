"""Scaled dot-product attention (a pure function) and multi-head attention (one module for self- and
cross-attention).

Notation: B batch, T query length, S key/value length, C model channels, H heads, D head size.
The posts are column-major ``(C, T, B)`` and split heads as ``(D, H, T, B)``; we are row-major
``(B, T, C)`` and split heads as ``(B, H, T, D)``, so the posts' ``Kᵀ Q`` becomes our ``Q Kᵀ``.

* ``scaled_dot_attention`` is the explicit math: it returns the attention weights and is the
  reference every test compares against.
* ``Attention``: Q, K and V come from one ``(3C, C)`` Dense (rows ``[Q; K; V]``). Self-attention
  projects ``x`` with all of it; cross-attention projects the decoder's ``x`` with the Q rows and the
  encoder's output (``memory``) with the K and V rows, once per source (``memory_keys_values``).

Without a trace the fused kernel (``F.scaled_dot_product_attention``) runs; with an active trace the
explicit path runs and every step is recorded: ``q``, ``k``, ``v``, ``scores`` (QKᵀ), ``scaled``,
``mask``, ``weights`` (softmax), ``heads`` (weights·V), ``merged`` and ``out``. A test proves the two
paths agree within 1e-5.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .kv_cache import KVCache
from .masks import causal_mask, check_mask, with_look_ahead
from .rotary import RotaryEmbedding
from .trace import NO_TRACE, Trace


def scaled_dot_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    matmul=torch.matmul,  # noqa: ANN001 - e.g. backprop.autograd_fn.mul4d, the hand-derived backward
    trace: Trace = NO_TRACE,
) -> tuple[Tensor, Tensor]:
    """``softmax(Q Kᵀ / sqrt(D)) V`` with an optional bool mask (True = may attend).

    Args: q ``(..., T, D)``, k ``(..., S, D)``, v ``(..., S, Dv)``, mask broadcastable to
    ``(..., T, S)``. Returns ``(out (..., T, Dv), weights (..., T, S))``.

    Masked scores are filled with the most negative finite float rather than ``-inf``: a row whose
    keys are all masked (a padding query) then softmaxes to a uniform row that we zero out, instead
    of ``exp(-inf - -inf) = NaN`` poisoning the forward and the backward pass.
    """
    scores = trace("scores", matmul(q, k.transpose(-2, -1)))  # (..., T, D) @ (..., D, S) -> (..., T, S)
    scores = trace("scaled", scores * (1.0 / math.sqrt(q.shape[-1])))
    if mask is not None:
        trace("mask", mask)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)  # (..., T, S)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # fully masked rows become all zeros, not uniform
    weights = trace("weights", weights)
    return trace("heads", matmul(weights, v)), weights  # (..., T, S) @ (..., S, Dv) -> (..., T, Dv)


AttentionWeights = tuple[Tensor, Tensor | None, Tensor, Tensor]  # Q/K/V Dense (3C, C) and bias, output Dense


def split_heads(x: Tensor, n: int, n_heads: int) -> Tensor:
    """``x (B, T, n·C)`` -> ``(n, B, H, T, D)``: ``n`` projections (Q, K, V) cut into heads."""
    b, t, width = x.shape
    return x.view(b, t, n, n_heads, width // (n * n_heads)).permute(2, 0, 3, 1, 4)  # (n, B, H, T, D)


def self_attention(
    x: Tensor,
    w: AttentionWeights,
    n_heads: int,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    cache: KVCache | None = None,
    layer: int = 0,
    rope: RotaryEmbedding | None = None,
    trace: Trace = NO_TRACE,
) -> Tensor:
    """Attention of ``x (B, T, C)`` over itself -> ``(B, T, C)``. ``mask`` is bool, True = may attend,
    broadcastable to ``(B, H, T, T)``; ``causal`` hides later positions. With ``cache``, ``x`` holds the
    positions after those already cached, and block ``layer``'s keys/values are added to it."""
    qkv = split_heads(F.linear(x, w[0], w[1]), 3, n_heads)  # (B, T, 3C) -> (3, B, H, T, D)
    q, kv = qkv[0], qkv[1:]  # (B, H, T, D), (2, B, H, T, D)
    if rope is not None:
        offset = 0 if cache is None else cache.length
        q, kv = rope(q, offset), torch.stack((rope(kv[0], offset), kv[1]))
    if cache is not None:
        k, v = cache.update(layer, kv)  # (B, H, cached + T, D) each
    else:
        k, v = kv[0], kv[1]
    return attend(q, k, v, mask, causal, w, trace)


def memory_keys_values(memory: Tensor, w: AttentionWeights, n_heads: int) -> tuple[Tensor, Tensor]:
    """Cross-attention's keys and values ``(B, H, S, D)`` of the encoder output ``memory (B, S, C)``:
    one source's worth, computed once and reused at every decoding step."""
    dim = w[2].shape[0]
    if memory.dim() != 3 or memory.shape[-1] != dim:
        raise ValueError(f"memory must be (B, S, {dim}), got {tuple(memory.shape)}")
    bias = None if w[1] is None else w[1][dim:]
    k, v = split_heads(F.linear(memory, w[0][dim:], bias), 2, n_heads).unbind(0)  # rows [K; V]
    return k, v


def cross_attention(
    x: Tensor,
    memory_kv: tuple[Tensor, Tensor],
    w: AttentionWeights,
    n_heads: int,
    mask: Tensor | None = None,
    trace: Trace = NO_TRACE,
) -> Tensor:
    """Queries from ``x (B, T, C)``, keys and values from ``memory_keys_values``; ``mask``
    broadcastable to ``(B, H, T, S)`` hides source padding -> ``(B, T, C)``."""
    k, v = memory_kv
    if k.shape[0] != x.shape[0]:
        raise ValueError(f"memory batch {k.shape[0]} does not match the input batch {x.shape[0]}")
    dim = w[2].shape[0]
    bias = None if w[1] is None else w[1][:dim]
    q = split_heads(F.linear(x, w[0][:dim], bias), 1, n_heads)[0]  # rows [Q]: (B, H, T, D)
    return attend(q, k, v, mask, False, w, trace)


def attend(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool, w: AttentionWeights, trace: Trace = NO_TRACE
) -> Tensor:
    """Heads ``q (B, H, T, D)``, ``k, v (B, H, S, D)`` -> output ``(B, T, C)`` through the output Dense."""
    b, n_heads, t, d = q.shape
    s = k.shape[2]
    if mask is not None:
        check_mask(mask, b, n_heads, t, s)
    is_causal = False
    if causal and t > 1:  # one query (decoding) is the newest position: it may see every key
        mask, is_causal = with_look_ahead(mask, causal, t, s, q.device)
    if trace.active:
        q, k, v = trace("q", q), trace("k", k), trace("v", v)
        if is_causal:
            mask = causal_mask(t, s, device=q.device)  # the explicit path needs the (T, S) mask itself
        out, _ = scaled_dot_attention(q, k, v, mask, trace=trace)
    else:
        # fully masked rows come out as zeros here too (a test checks), matching the explicit path
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
    out = trace("merged", out.transpose(1, 2).reshape(b, t, n_heads * d))  # (B, H, T, D) -> (B, T, H·D)
    return trace("out", F.linear(out, w[2], w[3]))  # (B, T, H·D) @ (H·D, C) -> (B, T, C)


class Attention(nn.Module):
    """``n_heads`` heads of size ``D = dim / n_heads`` (a ``ValueError`` names both numbers when it does
    not divide). ``bias`` applies to the Q/K/V Dense: post 000's code has none (its second printout
    counts them: 251,552 parameters with, 251,456 without), post 004's GPT has none, GPT-2 has them;
    the output Dense always has one, as in the posts. The module holds the weights; the equations are
    the functions above."""

    def __init__(self, n_heads: int, dim: int, *, bias: bool = True, rope: RotaryEmbedding | None = None) -> None:
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be >= 1, got {n_heads}")
        if dim % n_heads != 0:
            raise ValueError(f"dim={dim} is not divisible by n_heads={n_heads}")
        self.n_heads, self.dim, self.dim_head = n_heads, dim, dim // n_heads
        if rope is not None and rope.dim != self.dim_head:
            raise ValueError(f"rotary embedding dim={rope.dim} must equal the head size {self.dim_head}")
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias)  # rows: [Q; K; V]
        self.out = nn.Linear(dim, dim)
        self.rope = rope

    def extra_repr(self) -> str:
        return f"num_heads={self.n_heads}, head_size={self.dim_head}, {self.dim}=>{self.dim}"

    def weights(self) -> AttentionWeights:
        return self.qkv.weight, self.qkv.bias, self.out.weight, self.out.bias

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        causal: bool = False,
        cache: KVCache | None = None,
        layer: int = 0,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """Self-attention (``self_attention``) with this module's weights."""
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"expected input (B, T, {self.dim}), got {tuple(x.shape)}")
        w = self.weights()
        return self_attention(
            x, w, self.n_heads, mask, causal=causal, cache=cache, layer=layer, rope=self.rope, trace=trace
        )

    def memory_keys_values(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        return memory_keys_values(memory, self.weights(), self.n_heads)

    def cross(
        self, x: Tensor, memory_kv: tuple[Tensor, Tensor], mask: Tensor | None = None, trace: Trace = NO_TRACE
    ) -> Tensor:
        """Cross-attention (``cross_attention``) with this module's weights."""
        return cross_attention(x, memory_kv, self.weights(), self.n_heads, mask, trace)

    def summary_rows(self) -> list[tuple[str, str, int]]:
        """Rows in the style of the posts' printed models: denseQ/K/V and denseO."""
        note = "" if self.qkv.bias is not None else "; bias=false"
        each = self.dim * self.dim + (self.dim if self.qkv.bias is not None else 0)
        rows = [(f"dense{n}", f"Dense({self.dim} => {self.dim}{note})", each) for n in "QKV"]
        return rows + [("denseO", f"Dense({self.dim} => {self.dim})", sum(p.numel() for p in self.out.parameters()))]

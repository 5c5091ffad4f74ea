"""Scaled dot-product attention (a pure function) and multi-head attention (one module for self- and
cross-attention), with the steps they compute declared for the trace.

Notation: B batch, T query length, S key/value length, C model channels, H heads, D = d_h head size.
The posts are column-major ``(C, T, B)`` and split heads as ``(d_h, T, H, B)`` (post 000: "from
d_m × N × B to d_h × N × H × B"); we are row-major ``(B, T, C)`` and split heads as ``(B, H, T, D)``,
the same axes read backwards, so the posts' ``Kᵀ Q`` is our ``Q Kᵀ`` and their ``A = V softmax(...)``
our ``A = P V`` (P = the softmax weights).

* ``scaled_dot_attention`` is the explicit math: it returns the attention weights and is the
  reference every test compares against.
* ``Attention``: Q, K and V come from one ``(3C, C)`` Dense (rows ``[Q; K; V]``). Self-attention
  projects ``x`` with all of it; cross-attention projects the decoder's ``x`` with the Q rows and the
  encoder's output (``memory``) with the K and V rows, once per source (``memory_keys_values``).

Without a trace the fused kernel (``F.scaled_dot_product_attention``) runs; with an active trace the
explicit path runs and every step is recorded (``attention_steps``): ``q``, ``k``, ``v`` (with rotary
positions also ``q_rotated``, ``k_rotated``), ``scores`` (Q Kᵀ), ``scaled``, ``mask`` and ``masked``
(where a mask applies), ``weights`` (softmax), ``heads`` (weights·V), ``merged`` and ``out``. A test
proves the two paths agree within 1e-5.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention_steps import attention_steps
from .kv_cache import KVCache
from .masks import causal_mask, check_mask, with_look_ahead
from .norms import Norm, NormSpec, NormWeights
from .rotary import RotaryEmbedding
from .spec import BlockSpec
from .steps import Count, Step, SummaryRow
from .trace import NO_TRACE, Trace


def scaled_dot_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    matmul=torch.matmul,  # noqa: ANN001 - e.g. backprop.autograd_fn.mul4d, the hand-derived backward
    trace: Trace = NO_TRACE,
) -> tuple[Tensor, Tensor]:
    """``softmax(Q Kᵀ / sqrt(D) + M) V`` with an optional bool mask (True = may attend; M is 0 there, −∞
    elsewhere). Args: q ``(..., T, D)``, k ``(..., S, D)``, v ``(..., S, Dv)``, mask broadcastable to
    ``(..., T, S)``. Returns ``(out (..., T, Dv), weights (..., T, S))``.

    Masked scores are filled with the lowest finite float, not ``-inf``: a row whose keys are all masked
    (a padding query) softmaxes to a uniform row we zero out, not to ``exp(-inf - -inf) = NaN``.
    """
    if trace.active and "scores" not in trace.steps:  # called on its own: the steps of one head of this size
        trace = trace.declare(attention_steps(q.shape[-1], 1, bias=False))
    if trace.active and mask is None and "weights, no mask" in trace.steps:  # the softmax of S alone
        trace = trace.declare({**trace.steps, "weights": trace.steps["weights, no mask"]})
    scores = trace("scores", matmul(q, k.transpose(-2, -1)), q, k)  # (..., T, D) @ (..., D, S) -> (..., T, S)
    scores = trace("scaled", scores * (1.0 / math.sqrt(q.shape[-1])), scores)
    if mask is not None:
        lowest = torch.finfo(scores.dtype).min
        added = trace("mask", torch.zeros_like(scores).masked_fill(~mask, -math.inf)) if trace.active else None
        scores = trace("masked", scores.masked_fill(~mask, lowest), scores, added)  # S + M (−∞: the lowest float)
    weights = torch.softmax(scores, dim=-1)  # (..., T, S)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # fully masked rows become all zeros, not uniform
    weights = trace("weights", weights, scores)
    return trace("heads", matmul(weights, v), weights, v), weights  # (..., T, S) @ (..., S, Dv) -> (..., T, Dv)


class AttentionWeights(NamedTuple):
    qkv: Tensor  # (3C, C): rows [W_Q; W_K; W_V]
    qkv_bias: Tensor | None  # (3C,) or None
    out: Tensor  # W_O (C, C)
    out_bias: Tensor | None  # b_O (C,)
    q_norm: NormWeights | None = None  # QK-norm: the norm of each head's queries (D,), and of its keys
    k_norm: NormWeights | None = None
    value_mix: Tensor | None = None  # value residual: λ (2,), V ← λ₀ V + λ₁ V₁ (V₁ the first block's values)


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
    qk_norm: NormSpec | None = None,
    values: list[Tensor] | None = None,
    trace: Trace = NO_TRACE,
) -> Tensor:
    """Attention of ``x (B, T, C)`` over itself -> ``(B, T, C)``. ``mask`` is bool, True = may attend,
    broadcastable to ``(B, H, T, T)``; ``causal`` hides later positions. With ``cache``, ``x`` holds the
    positions after those already cached, and block ``layer``'s keys/values are added to it. ``qk_norm``:
    each head's queries and keys normalised with this norm (``w.q_norm``, ``w.k_norm``) before the scores.
    ``values`` (value residual): empty, the first block puts its values ``V₁ (B, H, T, D)`` in it; a later
    block with ``w.value_mix`` attends over ``λ₀ V + λ₁ V₁`` instead of its own ``V``."""
    qkv = split_heads(F.linear(x, w.qkv, w.qkv_bias), 3, n_heads)  # (B, T, 3C) -> (3, B, H, T, D)
    if cache is not None and not trace.active and rope is None and qk_norm is None and values is None:
        k, v = cache.update(layer, qkv[1:])  # decoding: the projections go to the cache as they came, no copy
        return attend(qkv[0], k, v, mask, causal, w, trace)
    q, k, v = positioned(x, qkv[0], qkv[1], qkv[2], w, cache, layer, rope, qk_norm, values, trace)
    return attend(q, k, v, mask, causal, w, trace)


def positioned(
    x: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    w: AttentionWeights,
    cache: KVCache | None,
    layer: int,
    rope: RotaryEmbedding | None,
    qk_norm: NormSpec | None,
    values: list[Tensor] | None,
    trace: Trace,
) -> tuple[Tensor, Tensor, Tensor]:
    """Self-attention's queries ``(B, H, T, D)``, keys and values ``(B, G, T, D)`` (G = H but for grouped
    queries) as ``self_attention`` reads them: traced, the first block's values mixed in, each head's queries
    and keys normalised, rotated by their positions, and the keys and values added to the cache (then
    ``(B, G, cached + T, D)``)."""
    if trace.active:
        q, k, v = (trace(name, t, x, w.qkv, w.qkv_bias) for name, t in (("q", q), ("k", k), ("v", v)))
    if values is not None:
        if not values:  # the first block: its values are every later block's V₁
            values.append(v)
        elif w.value_mix is not None:
            mixed = w.value_mix[0] * v + w.value_mix[1] * values[0]  # (B, G, T, D)
            v = trace("v_mixed", mixed, v, values[0], w.value_mix) if trace.active else mixed
    if qk_norm is not None and w.q_norm is not None and w.k_norm is not None:  # over each head's D channels
        q = trace("q_norm", qk_norm.apply(q, w.q_norm, qk_norm.eps), q, *w.q_norm)
        k = trace("k_norm", qk_norm.apply(k, w.k_norm, qk_norm.eps), k, *w.k_norm)
    if rope is not None:
        offset = 0 if cache is None else cache.length
        angles = rope.angles(q.shape[-2], offset, q.dtype) if trace.active else ()  # what the hand rule reads
        q = trace("q_rotated", rope(q, offset), q, *angles)
        k = trace("k_rotated", rope(k, offset), k, *angles)
    if cache is not None:
        k, v = cache.update(layer, torch.stack((k, v)))  # (2, B, G, T, D)
    return q, k, v


def memory_keys_values(memory: Tensor, w: AttentionWeights, n_heads: int) -> tuple[Tensor, Tensor]:
    """Cross-attention's keys and values ``(B, H, S, D)`` of the encoder output ``memory (B, S, C)``:
    one source's worth, computed once and reused at every decoding step."""
    dim = w.out.shape[0]
    if memory.dim() != 3 or memory.shape[-1] != dim:
        raise ValueError(f"memory must be (B, S, {dim}), got {tuple(memory.shape)}")
    bias = None if w.qkv_bias is None else w.qkv_bias[dim:]
    k, v = split_heads(F.linear(memory, w.qkv[dim:], bias), 2, n_heads).unbind(0)  # rows [K; V]: (B, H, S, D)
    return k, v


def cross_attention(
    x: Tensor,
    memory_kv: tuple[Tensor, Tensor],
    w: AttentionWeights,
    n_heads: int,
    mask: Tensor | None = None,
    trace: Trace = NO_TRACE,
    memory: Tensor | None = None,
) -> Tensor:
    """Queries from ``x (B, T, C)``, keys and values from ``memory_keys_values``; ``mask``
    broadcastable to ``(B, H, T, S)`` hides source padding -> ``(B, T, C)``. ``memory``, the encoder
    output the keys and values came from, is named to the trace (``None``: not known here)."""
    k, v = memory_kv
    if k.shape[0] != x.shape[0]:
        raise ValueError(f"memory batch {k.shape[0]} does not match the input batch {x.shape[0]}")
    dim = w.out.shape[0]
    bias = None if w.qkv_bias is None else w.qkv_bias[:dim]
    q = split_heads(F.linear(x, w.qkv[:dim], bias), 1, n_heads)[0]  # rows [Q]: (B, H, T, D)
    if trace.active:
        q = trace("q", q, x, w.qkv, w.qkv_bias)
        k, v = trace("k", k, memory, w.qkv, w.qkv_bias), trace("v", v, memory, w.qkv, w.qkv_bias)
    return attend(q, k, v, mask, False, w, trace)


def attend(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool, w: AttentionWeights, trace: Trace = NO_TRACE
) -> Tensor:
    """Heads ``q (B, H, T, D)``, ``k, v (B, G, S, D)`` (G = H, or with grouped queries a divisor of H that the
    explicit path has repeated to H already) -> output ``(B, T, C)`` through the output Dense."""
    (b, n_heads, t, d), s = q.shape, k.shape[2]
    if mask is not None:
        check_mask(mask, b, n_heads, t, s)
    is_causal = False
    if causal and t > 1:  # one query (decoding) is the newest position: it may see every key
        mask, is_causal = with_look_ahead(mask, causal, t, s, q.device)
    if trace.active:  # the explicit path needs the (T, S) causal mask itself
        out, _ = scaled_dot_attention(q, k, v, causal_mask(t, s, device=q.device) if is_causal else mask, trace=trace)
    elif k.shape[1] == n_heads:
        # fully masked rows come out as zeros here too (a test checks), matching the explicit path
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
    else:  # grouped queries: G heads of keys and values, each read by H / G heads of queries
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal, enable_gqa=True)
    merged = out.transpose(1, 2).reshape(b, t, n_heads * d)  # (B, H, T, D) -> (B, T, H·D)
    y = F.linear(merged, w.out, w.out_bias)  # (B, T, H·D) @ (H·D, C) -> (B, T, C)
    if not trace.active:  # decoding and training: nothing to record (one call less per step, at every token)
        return y
    merged = trace("merged", merged, out)
    return trace("out", F.linear(merged, w.out, w.out_bias), merged, w.out, w.out_bias)


class Attention(nn.Module):
    """Multi-head attention: ``n_heads`` heads of size ``D = dim / n_heads`` (a ``ValueError`` names both
    numbers when it does not divide), each with its own queries, keys and values. ``bias`` applies to the
    Q/K/V Dense: post 000's code has none (its second printout counts them: 251,552 parameters with,
    251,456 without), post 004's GPT has none, GPT-2 has them; ``out_bias`` to the output Dense (the posts
    have one, Llama none). The module holds the weights and its steps as configured (``reads`` and
    ``kind``: ``attention_steps``); the equations are the functions above (``equations``: self-attention's).

    An attention class is chosen by name (``layers.variants.ATTENTIONS``) and built from a block's spec
    (``build``); a subclass changes how many heads of keys and values there are (``kv_heads``), its
    ``equations`` and the steps it declares (``declare_steps``)."""

    about: ClassVar[str] = "multi-head attention (one key and value head per query head)"
    equations = staticmethod(self_attention)
    grouped: ClassVar[bool] = False  # whether fewer key/value heads than query heads are computed

    def __init__(
        self,
        n_heads: int,
        dim: int,
        *,
        bias: bool = True,
        out_bias: bool = True,
        rope: RotaryEmbedding | None = None,
        reads: str = "x",
        kind: str = "self",
        qk_norm: NormSpec | None = None,
        value_mix: bool = False,
        kv_heads: int | None = None,
    ) -> None:
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be >= 1, got {n_heads}")
        if dim % n_heads != 0:
            raise ValueError(f"dim={dim} is not divisible by n_heads={n_heads}")
        self.n_heads, self.dim, self.dim_head = n_heads, dim, dim // n_heads
        self.kv_heads = n_heads if kv_heads is None else kv_heads
        if self.kv_heads != n_heads and not self.grouped:
            raise ValueError(f"kv_heads={kv_heads} with n_heads={n_heads} is grouped-query attention, not {self.about}")
        if rope is not None and rope.dim != self.dim_head:
            raise ValueError(f"rotary embedding dim={rope.dim} must equal the head size {self.dim_head}")
        if qk_norm is not None and kind == "cross":
            raise ValueError("qk_norm normalises self-attention's queries and keys; cross-attention has none")
        kv = self.kv_heads * self.dim_head
        self.qkv = nn.Linear(dim, dim + 2 * kv, bias=bias)  # rows: [Q; K; V], K and V of kv_heads heads each
        self.out = nn.Linear(dim, dim, bias=out_bias)
        self.rope, self.qk_norm = rope, qk_norm
        self.q_norm = None if qk_norm is None else Norm(self.dim_head, qk_norm)  # over each head's D channels
        self.k_norm = None if qk_norm is None else Norm(self.dim_head, qk_norm)
        if value_mix and kind == "cross":
            raise ValueError("value_mix mixes a block's own values with the first block's; cross-attention has none")
        # value residual: λ of V ← λ₀ V + λ₁ V₁, an even mix at the start (modded-nanogpt's 0.5)
        self.value_mix = nn.Parameter(torch.tensor([0.5, 0.5])) if value_mix else None
        self.steps = self.declare_steps(
            dim,
            n_heads,
            bias=bias,
            out_bias=out_bias,
            rope=rope is not None,
            reads=reads,
            kind=kind,
            qk_norm=qk_norm,
            value_mix=value_mix,
        )

    @classmethod
    def build(cls, spec: BlockSpec, kind: str, reads: str = "x", rope: RotaryEmbedding | None = None) -> Attention:
        """The attention of a block built from ``spec``: ``kind`` is ``self``, ``causal``, ``decoder`` or
        ``cross`` (``attention_steps``); QK-norm and the value residual are self-attention's alone."""
        own = kind != "cross"
        return cls(
            spec.n_heads,
            spec.dim,
            bias=spec.qkv_bias,
            out_bias=spec.bias,
            rope=rope,
            reads=reads,
            kind=kind,
            qk_norm=spec.norm if spec.qk_norm and own else None,
            value_mix=spec.value_residual and own,
            kv_heads=spec.kv_heads if own else None,
        )

    def declare_steps(self, dim: int, n_heads: int, **settings: Any) -> dict[str, Step]:  # noqa: ANN401
        """The steps this attention computes, as configured (``attention_steps``)."""
        return attention_steps(dim, n_heads, **settings)

    def extra_repr(self) -> str:
        return f"num_heads={self.n_heads}, head_size={self.dim_head}, {self.dim}=>{self.dim}"

    def weights(self) -> AttentionWeights:
        both = self.q_norm is not None and self.k_norm is not None
        q_norm = self.q_norm.weights() if both and self.q_norm is not None else None
        k_norm = self.k_norm.weights() if both and self.k_norm is not None else None
        return AttentionWeights(
            self.qkv.weight, self.qkv.bias, self.out.weight, self.out.bias, q_norm, k_norm, self.value_mix
        )

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
        return type(self).equations(
            x,
            self.weights(),
            self.n_heads,
            mask,
            causal=causal,
            cache=cache,
            layer=layer,
            rope=self.rope,
            qk_norm=self.qk_norm,
            trace=trace.declare(self.steps),
        )

    def memory_keys_values(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        return memory_keys_values(memory, self.weights(), self.n_heads)

    def cross(
        self,
        x: Tensor,
        memory_kv: tuple[Tensor, Tensor],
        mask: Tensor | None = None,
        trace: Trace = NO_TRACE,
        memory: Tensor | None = None,
    ) -> Tensor:
        """Cross-attention (``cross_attention``) with this module's weights."""
        return cross_attention(x, memory_kv, self.weights(), self.n_heads, mask, trace.declare(self.steps), memory)

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        """Rows in the style of the posts' printed models: the layer, then denseQ/K/V and denseO."""
        count(p for name, p in self.named_parameters() if not name.startswith("rope."))  # counted by the rows below
        biased = self.qkv.bias is not None
        note = "" if biased else "; bias=false"
        rows = [(0, "", f"{type(self).__name__}({self.extra_repr()})", 0, 0)]
        for n, width in (("Q", self.dim), ("K", self.kv_heads * self.dim_head), ("V", self.kv_heads * self.dim_head)):
            rows.append((1, f"dense{n}", f"Dense({self.dim} => {width}{note})", (self.dim + biased) * width, 0))
        out_note = "" if self.out.bias is not None else "; bias=false"
        out_count = sum(p.numel() for p in self.out.parameters())
        rows.append((1, "denseO", f"Dense({self.dim} => {self.dim}{out_note})", out_count, 0))
        for name, norm in (("q_norm", self.q_norm), ("k_norm", self.k_norm)):
            if norm is not None:
                rows.append((1, name, norm.title(), sum(p.numel() for p in norm.parameters()), 0))
        if self.value_mix is not None:
            rows.append((1, "value_mix", "λ: the first block's values mixed in", self.value_mix.numel(), 0))
        if self.rope is not None:
            rows += [(1, "rope", *row[2:]) for row in self.rope.summary_rows(count)]
        return rows

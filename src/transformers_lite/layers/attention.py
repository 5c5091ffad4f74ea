"""Scaled dot-product attention (a pure function) and multi-head self- and cross-attention (modules).

Notation: B batch, T query length, S key/value length, C model channels, H heads, D head size.
The seeds are column-major ``(C, T, B)`` and split heads as ``(D, H, T, B)``; we are row-major
``(B, T, C)`` and split heads as ``(B, H, T, D)``, so the seed's ``Kᵀ Q`` becomes our ``Q Kᵀ``.

* ``scaled_dot_attention`` is the explicit math: it returns the attention weights and is the
  reference every test compares against.
* ``SelfAttention``: queries, keys and values all come from ``x``; optionally causal (each position
  sees itself and the past), with a ``KVCache`` that *appends* the new keys/values when decoding.
* ``CrossAttention``: queries from ``x`` (the decoder), keys and values from ``memory`` (the
  encoder output). ``memory_keys_values`` computes those once per source; decoding passes them back.

Both run the fused kernel (``F.scaled_dot_product_attention``) unless ``record_weights`` is set; then
they take the explicit path and keep the weights in ``.weights`` for inspection. A test proves the
two paths agree within 1e-5.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils import skip_init

from .kv_cache import KVCache
from .masks import causal_mask, check_mask, with_look_ahead
from .rotary import RotaryEmbedding


def scaled_dot_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout: float = 0.0,
    training: bool = False,
    matmul=torch.matmul,  # noqa: ANN001 - e.g. backprop.autograd_fn.mul4d, the hand-derived backward
) -> tuple[Tensor, Tensor]:
    """``softmax(Q Kᵀ / sqrt(D)) V`` with an optional bool mask (True = may attend).

    Args: q ``(..., T, D)``, k ``(..., S, D)``, v ``(..., S, Dv)``, mask broadcastable to
    ``(..., T, S)``. Returns ``(out (..., T, Dv), weights (..., T, S))``.

    Masked scores are filled with the most negative finite float rather than ``-inf``: a row whose
    keys are all masked (a padding query) then softmaxes to a uniform row that we zero out, instead
    of ``exp(-inf - -inf) = NaN`` poisoning the forward and the backward pass.
    """
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = matmul(q, k.transpose(-2, -1)) * scale  # (..., T, D) @ (..., D, S) -> (..., T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)  # (..., T, S)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # fully masked rows become all zeros, not uniform
    if dropout > 0.0 and training:
        weights = F.dropout(weights, p=dropout)
    return matmul(weights, v), weights  # (..., T, S) @ (..., S, Dv) -> (..., T, Dv)


class MultiHeadAttention(nn.Module):
    """What self- and cross-attention share: head split/merge, the attention itself, the output Dense.

    ``n_heads`` heads of size ``D = dim / n_heads`` (a ``ValueError`` names both numbers when it does
    not divide). The output projection always has a bias, as in the seeds.
    """

    def __init__(self, n_heads: int, dim: int, *, dropout: float = 0.0) -> None:
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be >= 1, got {n_heads}")
        if dim % n_heads != 0:
            raise ValueError(f"dim={dim} is not divisible by n_heads={n_heads}")
        self.n_heads, self.dim, self.dim_head = n_heads, dim, dim // n_heads
        self.dropout = dropout
        self.record_weights = False  # inspection: take the explicit path and keep the weights
        self.weights: Tensor | None = None  # (B, H, T, S) of the last call, when recorded
        # subclasses create their input projections, then ``self.out = nn.Linear(dim, dim)``: in that
        # order, so a random seed initialises the weights as it always has

    def extra_repr(self) -> str:
        return f"num_heads={self.n_heads}, head_size={self.dim_head}, {self.dim}=>{self.dim}"

    def split_heads(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.n_heads, self.dim_head).transpose(1, 2)  # (B, T, H·D) -> (B, H, T, D)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool = False) -> Tensor:
        """Heads ``q (B, H, T, D)``, ``k, v (B, H, S, D)`` -> output ``(B, T, C)``."""
        b, _, t, _ = q.shape
        s = k.shape[2]
        if mask is not None:
            check_mask(mask, b, self.n_heads, t, s)
        mask, is_causal = with_look_ahead(mask, causal, t, s, q.device)
        p = self.dropout if self.training else 0.0
        if self.record_weights:
            if is_causal:
                mask = causal_mask(t, s, device=q.device)  # the explicit path needs the (T, S) mask itself
            out, self.weights = scaled_dot_attention(q, k, v, mask, dropout=p, training=self.training)
        else:
            # fully masked rows come out as zeros here too (a test checks), matching the explicit path
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, is_causal=is_causal)
        out = out.transpose(1, 2).reshape(b, t, self.dim)  # (B, H, T, D) -> (B, T, H·D)
        return self.out(out)  # (B, T, H·D) @ (H·D, C) -> (B, T, C)

    def summary_rows(self) -> list[tuple[str, str, int]]:
        """Rows in the style of the seeds' printed models: denseQ/K/V and denseO."""
        raise NotImplementedError


def _dense_rows(dim: int, has_bias: bool, out_params: int) -> list[tuple[str, str, int]]:
    note = "" if has_bias else "; bias=false"
    each = dim * dim + (dim if has_bias else 0)
    rows = [(f"dense{n}", f"Dense({dim} => {dim}{note})", each) for n in "QKV"]
    return rows + [("denseO", f"Dense({dim} => {dim})", out_params)]


class SelfAttention(MultiHeadAttention):
    """Attention of a sequence over itself. Q, K and V live in one ``(3C, C)`` Dense (one matmul);
    ``bias`` applies to it (the seeds' classifier has biased, their GPT unbiased projections)."""

    def __init__(
        self, n_heads: int, dim: int, *, bias: bool = True, dropout: float = 0.0, rope: RotaryEmbedding | None = None
    ) -> None:
        super().__init__(n_heads, dim, dropout=dropout)
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias)  # rows: [Q; K; V]
        self.out = nn.Linear(dim, dim)
        if rope is not None and rope.dim != self.dim_head:
            raise ValueError(f"rotary embedding dim={rope.dim} must equal the head size {self.dim_head}")
        self.rope = rope

    def forward(
        self, x: Tensor, mask: Tensor | None = None, *, causal: bool = False, cache: KVCache | None = None
    ) -> Tensor:
        """``x (B, T, C)`` -> ``(B, T, C)``. ``mask`` is bool, True = may attend, broadcastable to
        ``(B, H, T, T)``. With ``cache``, ``x`` holds the new positions after those already cached."""
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"expected input (B, T, {self.dim}), got {tuple(x.shape)}")
        q, k, v = self.qkv(x).split(self.dim, dim=-1)  # (B, T, C) -> 3 x (B, T, H·D)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)  # (B, H, T, D)
        offset = 0 if cache is None else cache.length
        if self.rope is not None:
            q, k = self.rope(q, offset), self.rope(k, offset)
        if cache is not None:
            k, v = cache.append(k, v)  # (B, H, offset + T, D)
        return self.attend(q, k, v, mask, causal)

    def summary_rows(self) -> list[tuple[str, str, int]]:
        return _dense_rows(self.dim, self.qkv.bias is not None, sum(p.numel() for p in self.out.parameters()))


class CrossAttention(MultiHeadAttention):
    """Attention of ``x`` (queries, the decoder) over ``memory`` (keys and values, the encoder)."""

    def __init__(self, n_heads: int, dim: int, *, bias: bool = True, dropout: float = 0.0) -> None:
        super().__init__(n_heads, dim, dropout=dropout)
        self.query = skip_init(nn.Linear, dim, dim, bias=bias)
        self.key_value = skip_init(nn.Linear, dim, 2 * dim, bias=bias)  # rows: [K; V]
        # Q, K and V start from one draw of a (3C, C) Dense (same distribution: fan-in C either way), so a
        # random seed gives the translator the initial weights it has always had
        drawn = nn.Linear(dim, 3 * dim, bias=bias)
        with torch.no_grad():
            self.query.weight.copy_(drawn.weight[:dim])
            self.key_value.weight.copy_(drawn.weight[dim:])
            if bias:
                self.query.bias.copy_(drawn.bias[:dim])
                self.key_value.bias.copy_(drawn.bias[dim:])
        self.out = nn.Linear(dim, dim)

    def memory_keys_values(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values ``(B, H, S, D)`` of the encoder output ``memory (B, S, C)``: one source's
        worth, computed once and reused at every decoding step."""
        if memory.dim() != 3 or memory.shape[-1] != self.dim:
            raise ValueError(f"memory must be (B, S, {self.dim}), got {tuple(memory.shape)}")
        k, v = self.key_value(memory).split(self.dim, dim=-1)  # (B, S, C) -> 2 x (B, S, H·D)
        return self.split_heads(k), self.split_heads(v)

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        memory_kv: tuple[Tensor, Tensor] | None = None,
    ) -> Tensor:
        """``x (B, T, C)`` over ``memory (B, S, C)`` (or its precomputed ``memory_kv``) -> ``(B, T, C)``;
        ``mask`` broadcastable to ``(B, H, T, S)`` hides source padding."""
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"expected input (B, T, {self.dim}), got {tuple(x.shape)}")
        if memory_kv is None:
            if memory is None:
                raise ValueError("cross-attention needs memory or memory_kv")
            memory_kv = self.memory_keys_values(memory)
        k, v = memory_kv
        if k.shape[0] != x.shape[0]:
            raise ValueError(f"memory batch {k.shape[0]} does not match the input batch {x.shape[0]}")
        q = self.split_heads(self.query(x))  # (B, T, C) -> (B, H, T, D)
        return self.attend(q, k, v, mask)

    def summary_rows(self) -> list[tuple[str, str, int]]:
        return _dense_rows(self.dim, self.query.bias is not None, sum(p.numel() for p in self.out.parameters()))

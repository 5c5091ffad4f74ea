"""Scaled dot-product attention (a pure function) and multi-head attention (a module).

Notation: B batch, T query length, S key/value length, C model channels, H heads, D head size.
The seeds are column-major ``(C, T, B)`` and split heads as ``(D, H, T, B)``; we are row-major
``(B, T, C)`` and split heads as ``(B, H, T, D)``, so the seed's ``Kᵀ Q`` becomes our ``Q Kᵀ``.

Two paths compute the same thing:

* ``scaled_dot_attention`` is the explicit math, returns the attention weights, and is the
  reference every test compares against.
* ``F.scaled_dot_product_attention`` (fused) is used when the weights are not requested; a test
  proves the two agree within 1e-5.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .kv_cache import KVCache
from .masks import causal_mask, check_mask
from .rotary import RotaryEmbedding


def scaled_dot_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout: float = 0.0, training: bool = False,
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
    """Multi-head attention as in the seeds: Q/K/V projections, H heads, output projection.

    ``MultiHeadAttention(nhead, dim_in, dim_head=None, dim_out=None, bias=True)``: ``dim_head``
    defaults to ``dim_in // nhead`` (a ``ValueError`` names both numbers when it does not divide).
    ``bias`` applies to Q/K/V (the seeds' classifier uses biased, the GPT unbiased projections);
    the output projection always has a bias, as in the seeds.

    Q, K and V live in one ``(3·H·D, C)`` weight so self-attention is a single matmul; cross-attention
    uses row slices of it (views, no copies). ``summary`` still lists them as denseQ/K/V like the seeds.
    """

    def __init__(
        self,
        nhead: int,
        dim_in: int,
        dim_head: int | None = None,
        dim_out: int | None = None,
        bias: bool = True,
        dropout: float = 0.0,
        rope: RotaryEmbedding | None = None,
    ) -> None:
        super().__init__()
        if nhead < 1:
            raise ValueError(f"nhead must be >= 1, got {nhead}")
        if dim_head is None:
            if dim_in % nhead != 0:
                raise ValueError(f"dim_in={dim_in} is not divisible by nhead={nhead}; pass dim_head explicitly")
            dim_head = dim_in // nhead
        dim_out = dim_in if dim_out is None else dim_out
        self.nhead, self.dim_in, self.dim_head, self.dim_out = nhead, dim_in, dim_head, dim_out
        self.dropout = dropout
        inner = nhead * dim_head
        self.in_proj = nn.Linear(dim_in, 3 * inner, bias=bias)  # rows: [Q; K; V]
        self.out_proj = nn.Linear(inner, dim_out)
        if rope is not None and rope.dim != dim_head:
            raise ValueError(f"rotary embedding dim={rope.dim} must equal dim_head={dim_head}")
        self.rope = rope

    def extra_repr(self) -> str:
        return f"num_heads={self.nhead}, head_size={self.dim_head}, {self.dim_in}=>{self.dim_out}"

    def _project(self, x: Tensor, part: slice) -> Tensor:
        w = self.in_proj.weight[part]  # (n·H·D, C) view
        b = None if self.in_proj.bias is None else self.in_proj.bias[part]
        return F.linear(x, w, b)  # (B, T, C) @ (C, n·H·D) -> (B, T, n·H·D)

    def _split(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.nhead, self.dim_head).transpose(1, 2)  # (B, T, H·D) -> (B, H, T, D)

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        return_scores: bool = False,
        cache: KVCache | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``x (B, T, C)`` to ``memory (B, S, C)`` (self-attention when ``memory`` is None).

        ``mask`` is bool, True = may attend, broadcastable to ``(B, H, T, S)``. ``is_causal`` asks for
        the look-ahead mask without materialising it. ``cache`` enables incremental decoding: for
        self-attention the new keys/values are appended to it; for cross-attention it is filled once
        from ``memory`` and reused. Returns ``(out (B, T, dim_out), scores (B, H, T, S) or None)``.
        """
        if x.dim() != 3 or x.shape[-1] != self.dim_in:
            raise ValueError(f"expected input (B, T, {self.dim_in}), got {tuple(x.shape)}")
        bsz, t, _ = x.shape
        inner = self.nhead * self.dim_head
        offset = 0
        if memory is None:
            qkv = F.linear(x, self.in_proj.weight, self.in_proj.bias)  # (B, T, C) -> (B, T, 3·H·D)
            q, k, v = qkv.split(inner, dim=-1)  # 3 x (B, T, H·D)
            q, k, v = self._split(q), self._split(k), self._split(v)  # (B, H, T, D)
            if cache is not None:
                offset = cache.length
            if self.rope is not None:
                q, k = self.rope(q, offset), self.rope(k, offset)
            if cache is not None:
                k, v = cache.append(k, v)  # (B, H, offset + T, D)
        else:
            if memory.dim() != 3 or memory.shape[0] != bsz or memory.shape[-1] != self.dim_in:
                raise ValueError(f"memory must be (B={bsz}, S, {self.dim_in}), got {tuple(memory.shape)}")
            q = self._split(self._project(x, slice(0, inner)))  # (B, H, T, D)
            if cache is not None and cache.length > 0:
                k, v = cache.keys(), cache.values()  # encoder keys/values computed once
            else:
                kv = self._project(memory, slice(inner, 3 * inner))  # (B, S, 2·H·D)
                k, v = (self._split(part) for part in kv.split(inner, dim=-1))  # (B, H, S, D)
                if cache is not None:
                    k, v = cache.append(k, v)
        s = k.shape[2]
        if mask is not None:
            check_mask(mask, bsz, self.nhead, t, s)
        if is_causal and t > 1:
            if mask is not None:
                raise ValueError("pass either is_causal=True or an explicit mask, not both")
            if t != s:  # queries are the last t of s positions: build the offset look-ahead mask
                mask, is_causal = causal_mask(t, s, device=x.device), False
        elif is_causal:
            is_causal = False  # one query attends to every cached key
        p = self.dropout if self.training else 0.0
        if return_scores:
            if is_causal:
                mask = causal_mask(t, s, device=x.device)
            out, scores = scaled_dot_attention(q, k, v, mask, dropout=p, training=self.training)
        else:
            # fully masked rows come out as zeros here too (checked by a test), matching the explicit path
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, is_causal=is_causal)
            scores = None
        out = out.transpose(1, 2).reshape(bsz, t, inner)  # (B, H, T, D) -> (B, T, H·D)
        # F.linear rather than the module call: decoding one token at a time pays per call
        return F.linear(out, self.out_proj.weight, self.out_proj.bias), scores  # (B, T, H·D) -> (B, T, dim_out)

    def summary_rows(self) -> list[tuple[str, str, int]]:
        """Rows in the style of the seeds' printed models: denseQ/K/V and denseO."""
        inner = self.nhead * self.dim_head
        bias = self.in_proj.bias is not None
        qkv = inner * self.dim_in + (inner if bias else 0)
        note = "" if bias else "; bias=false"
        rows = [(f"dense{n}", f"Dense({self.dim_in} => {inner}{note})", qkv) for n in "QKV"]
        rows.append(("denseO", f"Dense({inner} => {self.dim_out})", inner * self.dim_out + self.dim_out))
        return rows

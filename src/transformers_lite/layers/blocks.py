"""Encoder and decoder blocks.

Shapes: B batch, T target/query length, S source length, C channels.

``EncoderBlock`` is the seeds' ``TransformerBlock``. Post-norm, as in the seeds and the original
paper::

    h = LayerNorm(x + Dropout(MHA(x)))
    y = LayerNorm(h + Dropout(FF(h)))

With ``norm_first=True`` (pre-norm, as in GPT-2 and most modern models, easier to train deep)::

    h = x + Dropout(MHA(LayerNorm(x)))
    y = h + Dropout(FF(LayerNorm(h)))

``DecoderBlock`` adds cross-attention over the encoder output between the two. The draft in seed
001 passes the self-attention input (not its normalised output) to the decoder's feed-forward and
swaps the encoder/decoder arguments of cross-attention; here queries come from the decoder and
keys/values from the encoder, and each sub-layer consumes the previous one's output, as in
"Attention is all you need".
"""

from __future__ import annotations

from torch import Tensor, nn

from .attention import MultiHeadAttention
from .feed_forward import FeedForward
from .kv_cache import KVCache
from .rotary import RotaryEmbedding


def maybe_dropout(dropout: nn.Dropout, x: Tensor) -> Tensor:
    """Dropout, skipped outright when it is the identity (evaluation, or p = 0): per-token decoding
    pays for every module call."""
    return dropout(x) if dropout.training and dropout.p > 0 else x


class EncoderBlock(nn.Module):
    def __init__(
        self,
        nhead: int,
        dim: int,
        dim_hidden: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        qkv_bias: bool = True,
        rope: RotaryEmbedding | None = None,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.attention = MultiHeadAttention(nhead, dim, bias=qkv_bias, dropout=0.0, rope=rope)
        self.norm_attention = nn.LayerNorm(dim)
        self.feed_forward = FeedForward(dim, dim_hidden, activation)
        self.norm_feedforward = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        return_scores: bool = False,
        cache: KVCache | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """``x (B, T, C)`` -> ``(y (B, T, C), scores (B, H, T, S) or None)``."""
        if self.norm_first:
            a, scores = self.attention(self.norm_attention(x), mask=mask, is_causal=is_causal,
                                       return_scores=return_scores, cache=cache)
            h = x + maybe_dropout(self.dropout, a)
            return h + maybe_dropout(self.dropout, self.feed_forward(self.norm_feedforward(h))), scores
        a, scores = self.attention(x, mask=mask, is_causal=is_causal, return_scores=return_scores, cache=cache)
        h = self.norm_attention(x + maybe_dropout(self.dropout, a))
        return self.norm_feedforward(h + maybe_dropout(self.dropout, self.feed_forward(h))), scores


class DecoderBlock(nn.Module):
    """Masked self-attention -> cross-attention over the encoder output -> feed-forward."""

    def __init__(
        self,
        nhead: int,
        dim: int,
        dim_hidden: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        qkv_bias: bool = True,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attention = MultiHeadAttention(nhead, dim, bias=qkv_bias)
        self.norm_self = nn.LayerNorm(dim)
        self.cross_attention = MultiHeadAttention(nhead, dim, bias=qkv_bias)
        self.norm_cross = nn.LayerNorm(dim)
        self.feed_forward = FeedForward(dim, dim_hidden, activation)
        self.norm_feedforward = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        return_scores: bool = False,
        cache: KVCache | None = None,
        memory_cache: KVCache | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """``x (B, T, C)``, ``memory (B, S, C)`` -> ``(y (B, T, C), cross scores (B, H, T, S) or None)``."""
        kw = dict(return_scores=return_scores)
        if self.norm_first:
            a, _ = self.self_attention(self.norm_self(x), mask=self_mask, is_causal=is_causal, cache=cache)
            h = x + maybe_dropout(self.dropout, a)
            c, scores = self.cross_attention(self.norm_cross(h), memory, memory_mask, cache=memory_cache, **kw)
            h = h + maybe_dropout(self.dropout, c)
            return h + maybe_dropout(self.dropout, self.feed_forward(self.norm_feedforward(h))), scores
        a, _ = self.self_attention(x, mask=self_mask, is_causal=is_causal, cache=cache)
        h = self.norm_self(x + maybe_dropout(self.dropout, a))
        c, scores = self.cross_attention(h, memory, memory_mask, cache=memory_cache, **kw)
        h = self.norm_cross(h + maybe_dropout(self.dropout, c))
        return self.norm_feedforward(h + maybe_dropout(self.dropout, self.feed_forward(h))), scores

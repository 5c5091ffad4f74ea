"""Transformer blocks: attention and feed-forward sub-layers, each inside one ``Residual``.

Shapes: B batch, T target/query length, S source length, C channels.

* ``EncoderBlock`` (the seeds' ``TransformerBlock``): self-attention over every position (padding
  keys masked) -> feed-forward. The classifier and the translator's encoder stack these.
* ``CausalBlock`` (decoder-only, the GPT's block): the same layers, but each position attends to
  itself and the past only, with a ``KVCache`` for incremental decoding.
* ``DecoderBlock`` (the translator's decoder): causal self-attention -> cross-attention over the
  encoder output -> feed-forward.

Post-norm by default, as the seeds; ``norm_first=True`` gives pre-norm (see ``residual``). The draft
in seed 001 passes the self-attention input (not its normalised output) to the decoder's
feed-forward and swaps the encoder/decoder arguments of cross-attention; here queries come from the
decoder and keys/values from the encoder, and each sub-layer consumes the previous one's output, as
in "Attention is all you need".
"""

from __future__ import annotations

from torch import Tensor, nn

from .attention import CrossAttention, SelfAttention
from .feed_forward import FeedForward
from .kv_cache import KVCache
from .residual import Residual
from .rotary import RotaryEmbedding


class EncoderBlock(nn.Module):
    def __init__(
        self,
        n_heads: int,
        dim: int,
        dim_hidden: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        qkv_bias: bool = True,
        rope: RotaryEmbedding | None = None,
        eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.attention = SelfAttention(n_heads, dim, bias=qkv_bias, rope=rope)
        self.attention_residual = Residual(dim, dropout, norm_first, eps)
        self.feed_forward = FeedForward(dim, dim_hidden, activation)
        self.feed_forward_residual = Residual(dim, dropout, norm_first, eps)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """``x (B, T, C)`` -> ``(B, T, C)``; ``mask`` (True = may attend) hides padding keys."""
        x = self.attention_residual(x, lambda h: self.attention(h, mask))
        return self.feed_forward_residual(x, self.feed_forward)


class CausalBlock(EncoderBlock):
    """The GPT's block: masked (causal) self-attention -> feed-forward. ``causal = False`` drops the
    mask (seed 004's experiment: the model then sees the future it is trained to predict)."""

    causal = True

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:  # type: ignore[override]
        """``x (B, T, C)`` -> ``(B, T, C)``; with ``cache``, ``x`` holds the positions after the cached ones."""
        x = self.attention_residual(x, lambda h: self.attention(h, causal=self.causal, cache=cache))
        return self.feed_forward_residual(x, self.feed_forward)


class DecoderBlock(nn.Module):
    """Masked self-attention -> cross-attention over the encoder output -> feed-forward."""

    def __init__(
        self,
        n_heads: int,
        dim: int,
        dim_hidden: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        qkv_bias: bool = True,
    ) -> None:
        super().__init__()
        self.self_attention = SelfAttention(n_heads, dim, bias=qkv_bias)
        self.self_attention_residual = Residual(dim, dropout, norm_first)
        self.cross_attention = CrossAttention(n_heads, dim, bias=qkv_bias)
        self.cross_attention_residual = Residual(dim, dropout, norm_first)
        self.feed_forward = FeedForward(dim, dim_hidden, activation)
        self.feed_forward_residual = Residual(dim, dropout, norm_first)

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        memory_kv: tuple[Tensor, Tensor] | None = None,
    ) -> Tensor:
        """``x (B, T, C)`` and ``memory (B, S, C)`` (or its keys/values ``memory_kv``) -> ``(B, T, C)``.

        ``self_mask`` adds target padding to the look-ahead mask; ``memory_mask`` hides source padding.
        """
        x = self.self_attention_residual(x, lambda h: self.self_attention(h, self_mask, causal=True, cache=cache))
        x = self.cross_attention_residual(
            x, lambda h: self.cross_attention(h, memory, memory_mask, memory_kv=memory_kv)
        )
        return self.feed_forward_residual(x, self.feed_forward)

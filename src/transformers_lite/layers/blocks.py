"""Transformer blocks, built from one ``BlockSpec``: attention and feed-forward sub-layers, each inside
one ``Residual``.

Shapes: B batch, T target/query length, S source length, C channels.

* ``Block``: self-attention -> feed-forward. With ``causal=False`` every position sees every other
  (padding keys masked): the posts' ``TransformerBlock``, stacked by the classifier, the pretraining
  encoder and the translator's encoder. With ``causal=True`` each position sees itself and the past
  only: the GPT's block (post 004), with a ``KVCache`` for incremental decoding.
* ``DecoderBlock`` (the translator's decoder, post 001): causal self-attention -> cross-attention over
  the encoder output -> feed-forward.

Post-norm by default, as the posts; ``norm_first=True`` gives pre-norm (see ``residual``). The draft
decoder in post 001 feeds its feed-forward the *normalised self-attention output*, so the
cross-attention's result never reaches it, and it swaps the encoder/decoder arguments of
cross-attention; here queries come from the decoder, keys and values from the encoder, and each
sub-layer reads the previous one's output, as in "Attention is all you need".

Traced steps, per block: ``attention_residual.norm``/``sum``, ``attention.*`` (see ``attention``),
``feed_forward_residual.norm``/``sum``, ``feed_forward.hidden``/``out``; a decoder block adds
``cross_attention.*`` and ``cross_attention_residual.*``.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from .attention import Attention
from .feed_forward import FeedForward
from .kv_cache import KVCache
from .residual import Residual
from .rotary import RotaryEmbedding
from .trace import NO_TRACE, Trace


@dataclass(frozen=True)
class BlockSpec:
    """Everything a block is built from (a model config's ``block()`` gives it)."""

    dim: int
    n_heads: int
    dim_hidden: int
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = False
    qkv_bias: bool = True
    norm_eps: float = 1e-5
    causal: bool = False  # self-attention sees only the past (a GPT's or a decoder's block)


class Block(nn.Module):
    def __init__(self, spec: BlockSpec, rope: RotaryEmbedding | None = None) -> None:
        super().__init__()
        self.causal = spec.causal
        self.attention = Attention(spec.n_heads, spec.dim, bias=spec.qkv_bias, rope=rope)
        self.attention_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)
        self.feed_forward = FeedForward(spec.dim, spec.dim_hidden, spec.activation)
        self.feed_forward_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        layer: int = 0,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """``x (B, T, C)`` -> ``(B, T, C)``; ``mask`` (True = may attend) hides padding keys. With
        ``cache`` (causal blocks), ``x`` holds the positions after the cached ones; ``layer`` is this
        block's place in the cache."""
        res = trace.at("attention_residual")
        h = self.attention(
            self.attention_residual.enter(x, res),
            mask,
            causal=self.causal,
            cache=cache,
            layer=layer,
            trace=trace.at("attention"),
        )
        x = self.attention_residual.leave(x, h, res)
        res = trace.at("feed_forward_residual")
        h = self.feed_forward(self.feed_forward_residual.enter(x, res), trace.at("feed_forward"))
        return self.feed_forward_residual.leave(x, h, res)


class DecoderBlock(nn.Module):
    """Masked self-attention -> cross-attention over the encoder output -> feed-forward."""

    def __init__(self, spec: BlockSpec) -> None:
        super().__init__()
        self.attention = Attention(spec.n_heads, spec.dim, bias=spec.qkv_bias)
        self.attention_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)
        self.cross_attention = Attention(spec.n_heads, spec.dim, bias=spec.qkv_bias)
        self.cross_attention_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)
        self.feed_forward = FeedForward(spec.dim, spec.dim_hidden, spec.activation)
        self.feed_forward_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)

    def forward(
        self,
        x: Tensor,
        memory_kv: tuple[Tensor, Tensor],
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        layer: int = 0,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """``x (B, T, C)`` over the encoder's keys/values ``memory_kv`` (``cross_attention.memory_keys_values``)
        -> ``(B, T, C)``. ``self_mask`` adds target padding to the look-ahead mask; ``memory_mask`` hides
        source padding."""
        res = trace.at("attention_residual")
        h = self.attention(
            self.attention_residual.enter(x, res),
            self_mask,
            causal=True,
            cache=cache,
            layer=layer,
            trace=trace.at("attention"),
        )
        x = self.attention_residual.leave(x, h, res)
        res = trace.at("cross_attention_residual")
        h = self.cross_attention.cross(
            self.cross_attention_residual.enter(x, res), memory_kv, memory_mask, trace.at("cross_attention")
        )
        x = self.cross_attention_residual.leave(x, h, res)
        res = trace.at("feed_forward_residual")
        h = self.feed_forward(self.feed_forward_residual.enter(x, res), trace.at("feed_forward"))
        return self.feed_forward_residual.leave(x, h, res)

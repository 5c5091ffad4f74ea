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
decoder in post 001 feeds its feed-forward the normalised self-attention output (its ``y2``), so the
cross-attention's result never passes through the feed-forward (it only joins the last residual
sum); here each sub-layer reads the previous one's output, as in "Attention is all you need".
Queries come from the decoder, keys and values from the encoder, in the draft as here.

Traced steps, per block: ``attention_residual.norm``/``sum``, ``attention.*`` (see ``attention``),
``feed_forward_residual.norm``/``sum``, ``feed_forward.hidden``/``out``; a decoder block adds
``cross_attention.*`` and ``cross_attention_residual.*``.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from .attention import Attention, cross_attention, self_attention
from .feed_forward import FeedForward, feed_forward
from .kv_cache import KVCache
from .residual import Residual, residual_in, residual_out
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


# (attention norm, attention, feed-forward norm, feed-forward, (heads, rope, activation, dropout)[, cross norm,
# cross-attention]): the parameters, and the block's settings read with them (one lookup per generation)
BlockWeights = tuple


def _detached(weights: tuple) -> tuple:
    return tuple(_detached(w) if isinstance(w, tuple) else w.detach() if isinstance(w, Tensor) else w for w in weights)


class Block(nn.Module):
    """``forward`` runs the block's equations (``run``) on its own weights; decoding reads the weights once
    (``weights(detach=True)``) and calls ``run`` for every token: one forward, without the cost of
    looking up a dozen parameters per token."""

    def __init__(self, spec: BlockSpec, rope: RotaryEmbedding | None = None) -> None:
        super().__init__()
        self.causal, self.norm_first = spec.causal, spec.norm_first
        self.attention = Attention(spec.n_heads, spec.dim, bias=spec.qkv_bias, rope=rope)
        self.attention_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)
        self.feed_forward = FeedForward(spec.dim, spec.dim_hidden, spec.activation)
        self.feed_forward_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)

    def weights(self, detach: bool = False) -> BlockWeights:
        """Every parameter the block's equations read (detached: plain tensors, for decoding)."""
        w = (
            self.attention_residual.weights(),
            self.attention.weights(),
            self.feed_forward_residual.weights(),
            self.feed_forward.weights(),
            (self.attention.n_heads, self.attention.rope, self.feed_forward.act, self.attention_residual.dropout.p),
        )
        return _detached(w) if detach else w

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
        return self.run(self.weights(), x, mask, cache=cache, layer=layer, trace=trace)

    def run(
        self,
        w: BlockWeights,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        layer: int = 0,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """The block's equations on the weights ``w`` (``weights()``): self-attention, then feed-forward,
        each inside its residual sub-layer."""
        norm1, attention, norm2, ff, (heads, rope, act, drop) = w
        drop = drop if self.training else 0.0
        res = trace.at("attention_residual")
        h = self_attention(
            residual_in(x, norm1, self.norm_first, res),
            attention,
            heads,
            mask,
            causal=self.causal,
            cache=cache,
            layer=layer,
            rope=rope,
            trace=trace.at("attention"),
        )
        x = residual_out(x, h, norm1, self.norm_first, drop, res)
        res = trace.at("feed_forward_residual")
        h = feed_forward(residual_in(x, norm2, self.norm_first, res), ff, act, trace.at("feed_forward"))
        return residual_out(x, h, norm2, self.norm_first, drop, res)


class DecoderBlock(nn.Module):
    """Masked self-attention -> cross-attention over the encoder output -> feed-forward."""

    def __init__(self, spec: BlockSpec) -> None:
        super().__init__()
        self.norm_first = spec.norm_first
        self.attention = Attention(spec.n_heads, spec.dim, bias=spec.qkv_bias)
        self.attention_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)
        self.cross_attention = Attention(spec.n_heads, spec.dim, bias=spec.qkv_bias)
        self.cross_attention_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)
        self.feed_forward = FeedForward(spec.dim, spec.dim_hidden, spec.activation)
        self.feed_forward_residual = Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)

    def weights(self, detach: bool = False) -> BlockWeights:
        w = (
            self.attention_residual.weights(),
            self.attention.weights(),
            self.feed_forward_residual.weights(),
            self.feed_forward.weights(),
            (self.attention.n_heads, None, self.feed_forward.act, self.attention_residual.dropout.p),
            self.cross_attention_residual.weights(),
            self.cross_attention.weights(),
        )
        return _detached(w) if detach else w

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
        return self.run(self.weights(), x, memory_kv, self_mask, memory_mask, cache=cache, layer=layer, trace=trace)

    def run(
        self,
        w: BlockWeights,
        x: Tensor,
        memory_kv: tuple[Tensor, Tensor],
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        layer: int = 0,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        norm1, attention, norm2, ff, (heads, _, act, drop), norm_cross, cross = w
        drop = drop if self.training else 0.0
        res = trace.at("attention_residual")
        h = self_attention(
            residual_in(x, norm1, self.norm_first, res),
            attention,
            heads,
            self_mask,
            causal=True,
            cache=cache,
            layer=layer,
            trace=trace.at("attention"),
        )
        x = residual_out(x, h, norm1, self.norm_first, drop, res)
        res = trace.at("cross_attention_residual")
        h = cross_attention(
            residual_in(x, norm_cross, self.norm_first, res), memory_kv, cross, heads, memory_mask,
            trace.at("cross_attention"),
        )  # fmt: skip
        x = residual_out(x, h, norm_cross, self.norm_first, drop, res)
        res = trace.at("feed_forward_residual")
        h = feed_forward(residual_in(x, norm2, self.norm_first, res), ff, act, trace.at("feed_forward"))
        return residual_out(x, h, norm2, self.norm_first, drop, res)

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

from collections.abc import Callable
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


def _attention_sublayer(spec: BlockSpec, rope: RotaryEmbedding | None = None) -> tuple[Attention, Residual]:
    return Attention(spec.n_heads, spec.dim, bias=spec.qkv_bias, rope=rope), _residual(spec)


def _feed_forward_sublayer(spec: BlockSpec) -> tuple[FeedForward, Residual]:
    return FeedForward(spec.dim, spec.dim_hidden, spec.activation), _residual(spec)


def _residual(spec: BlockSpec) -> Residual:
    return Residual(spec.dim, spec.dropout, spec.norm_first, spec.norm_eps)


def _self_attention_weights(block: Block | DecoderBlock) -> tuple:
    """The self-attention and feed-forward part of ``BlockWeights``."""
    return (
        block.attention_residual.weights(),
        block.attention.weights(),
        block.feed_forward_residual.weights(),
        block.feed_forward.weights(),
        (block.attention.n_heads, block.attention.rope, block.feed_forward.act, block.attention_residual.dropout.p),
    )


def _attention_step(
    x: Tensor,
    norm: tuple,
    attend: Callable[[Tensor, Trace], Tensor],
    norm_first: bool,
    drop: float,
    trace: Trace,
    name: str,
) -> Tensor:
    """One attention sub-layer: ``x (B, T, C)`` -> ``x + attend(norm(x))`` (pre-norm) or its post-norm form;
    ``attend(h, trace)`` is the self- or cross-attention on the normed input."""
    res = trace.at(f"{name}_residual")
    h = attend(residual_in(x, norm, norm_first, res), trace.at(name))
    return residual_out(x, h, norm, norm_first, drop, res)


def _feed_forward_step(
    x: Tensor, norm: tuple, ff: tuple, act: Callable[[Tensor], Tensor], norm_first: bool, drop: float, trace: Trace
) -> Tensor:
    res = trace.at("feed_forward_residual")
    h = feed_forward(residual_in(x, norm, norm_first, res), ff, act, trace.at("feed_forward"))
    return residual_out(x, h, norm, norm_first, drop, res)


class Block(nn.Module):
    """``forward`` runs the block's equations (``run``) on its own weights; decoding reads the weights once
    (``weights(detach=True)``) and calls ``run`` for every token: one forward, without the cost of
    looking up a dozen parameters per token."""

    def __init__(self, spec: BlockSpec, rope: RotaryEmbedding | None = None) -> None:
        super().__init__()
        self.causal, self.norm_first = spec.causal, spec.norm_first
        self.attention, self.attention_residual = _attention_sublayer(spec, rope)
        self.feed_forward, self.feed_forward_residual = _feed_forward_sublayer(spec)

    def weights(self, detach: bool = False) -> BlockWeights:
        """Every parameter the block's equations read (detached: plain tensors, for decoding)."""
        w = _self_attention_weights(self)
        return _detached(w) if detach else w

    def forward(self, x: Tensor, mask: Tensor | None = None, **step: object) -> Tensor:
        """``x (B, T, C)`` -> ``(B, T, C)``; ``mask`` (True = may attend) hides padding keys. ``step``:
        ``cache``, ``layer`` and ``trace`` as for ``run``."""
        return self.run(self.weights(), x, mask, **step)  # type: ignore[arg-type]

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
        each inside its residual sub-layer. With ``cache`` (causal blocks), ``x`` holds the positions after
        the cached ones; ``layer`` is this block's place in the cache; ``trace`` receives the steps."""
        norm1, attention, norm2, ff, (heads, rope, act, drop) = w
        drop = drop if self.training else 0.0

        def attend(h: Tensor, at: Trace) -> Tensor:
            return self_attention(
                h, attention, heads, mask, causal=self.causal, cache=cache, layer=layer, rope=rope, trace=at
            )

        x = _attention_step(x, norm1, attend, self.norm_first, drop, trace, "attention")
        return _feed_forward_step(x, norm2, ff, act, self.norm_first, drop, trace)


class DecoderBlock(nn.Module):
    """Masked self-attention -> cross-attention over the encoder output -> feed-forward."""

    def __init__(self, spec: BlockSpec) -> None:
        super().__init__()
        self.norm_first = spec.norm_first
        self.attention, self.attention_residual = _attention_sublayer(spec)
        self.cross_attention, self.cross_attention_residual = _attention_sublayer(spec)
        self.feed_forward, self.feed_forward_residual = _feed_forward_sublayer(spec)

    def weights(self, detach: bool = False) -> BlockWeights:
        w = (*_self_attention_weights(self), self.cross_attention_residual.weights(), self.cross_attention.weights())
        return _detached(w) if detach else w

    def forward(
        self,
        x: Tensor,
        memory_kv: tuple[Tensor, Tensor],
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        **step: object,
    ) -> Tensor:
        """``x (B, T, C)`` over the encoder's keys/values ``memory_kv`` (``cross_attention.memory_keys_values``)
        -> ``(B, T, C)``. ``self_mask`` adds target padding to the look-ahead mask; ``memory_mask`` hides
        source padding; ``step``: ``cache``, ``layer`` and ``trace`` as for ``Block``."""
        return self.run(self.weights(), x, memory_kv, self_mask, memory_mask, **step)  # type: ignore[arg-type]

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

        def attend(h: Tensor, at: Trace) -> Tensor:
            return self_attention(h, attention, heads, self_mask, causal=True, cache=cache, layer=layer, trace=at)

        def attend_memory(h: Tensor, at: Trace) -> Tensor:
            return cross_attention(h, memory_kv, cross, heads, memory_mask, at)

        x = _attention_step(x, norm1, attend, self.norm_first, drop, trace, "attention")
        x = _attention_step(x, norm_cross, attend_memory, self.norm_first, drop, trace, "cross_attention")
        return _feed_forward_step(x, norm2, ff, act, self.norm_first, drop, trace)

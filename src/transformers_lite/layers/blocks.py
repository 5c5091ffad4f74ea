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
``cross_attention.*`` and ``cross_attention_residual.*``. Each sub-layer's module declares its steps
as this block configures it (what it reads: ``x`` or its norm).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

import torch
from torch import Tensor, nn

from .attention import Attention, AttentionWeights, cross_attention
from .feed_forward import FeedForwardLayer
from .kv_cache import KVCache
from .norms import NormWeights, norm_of
from .residual import Residual, residual_in, residual_out
from .rotary import RotaryEmbedding
from .spec import BlockSpec
from .steps import Step
from .trace import NO_TRACE, Trace
from .variants import attention_class, feed_forward_class

__all__ = ["Block", "BlockSpec", "BlockWeights", "DecoderBlock"]


class BlockWeights(NamedTuple):
    """Every parameter a block's equations read (a decoder block's cross-attention too)."""

    attention_norm: NormWeights
    attention: AttentionWeights
    feed_forward_norm: NormWeights
    feed_forward: NamedTuple  # the feed-forward class's own record (``FeedForwardWeights``, ``SwiGLUWeights``)
    cross_attention_norm: NormWeights | None = None
    cross_attention: AttentionWeights | None = None
    shortcut: Tensor | None = None  # λ (2,) of the embedding shortcut x ← λ₀ x + λ₁ x₀


def _detached(weights: tuple) -> tuple:
    """The same record (a named tuple of named tuples) of plain tensors, for decoding."""
    parts = [_detached(w) if isinstance(w, tuple) else w.detach() if isinstance(w, Tensor) else w for w in weights]
    return type(weights)(*parts) if hasattr(weights, "_fields") else tuple(parts)


class _Sublayers(nn.Module):
    """What ``Block`` and ``DecoderBlock`` share: the spec, the self-attention and feed-forward sub-layers."""

    def __init__(self, spec: BlockSpec, rope: RotaryEmbedding | None, role: str, cross: bool = False) -> None:
        super().__init__()
        self.spec, self.norm_first = spec, spec.norm_first
        self.reads = norm_of(spec.norm, "x") if spec.norm_first else "x"  # what each sub-layer reads
        # each sub-layer's class by name (``layers.variants``), built from the spec, in the order the forward
        # runs them: a seed draws the same weights as ever
        self.attention = attention_class(spec.attention).build(spec, role, self.reads, rope)
        self.attention_residual = self._residual("MHA")
        if cross:  # cross-attention has one key and value head per query head, whatever self-attention's
            self.cross_attention = Attention.build(spec, "cross", self.reads)
            self.cross_attention_residual = self._residual("cross-MHA")
        self.feed_forward = feed_forward_class(spec.ffn)(spec, self.reads)
        self.feed_forward_residual = self._residual("FFN")
        # what the sub-layers are run with, read at every token (plain values and functions: no module lookup)
        self.attend_with = (spec.n_heads, rope, self.attention.qk_norm)
        self.self_attend = type(self.attention).equations
        self.act, self.ffn_equations = self.feed_forward.act, type(self.feed_forward).equations
        sublayers: list[tuple[str, Residual, Attention | FeedForwardLayer]] = [
            ("attention", self.attention_residual, self.attention)
        ]
        if cross:
            sublayers.append(("cross_attention", self.cross_attention_residual, self.cross_attention))
        sublayers.append(("feed_forward", self.feed_forward_residual, self.feed_forward))
        # each sub-layer's steps, as its residual and its attention or feed-forward declare them
        self.declared: dict[str, tuple[Mapping[str, Step], Mapping[str, Step]]] = {
            name: (residual.steps, module.steps) for name, residual, module in sublayers
        }

    def _residual(self, branch: str) -> Residual:
        s = self.spec
        return Residual(s.dim, s.dropout, s.norm_first, s.norm, branch)

    def _sublayer(
        self, x: Tensor, norm: NormWeights, f: Callable[[Tensor, Trace], Tensor], name: str, trace: Trace
    ) -> Tensor:
        """One sub-layer: ``x (B, T, C)`` -> ``x + f(norm(x))`` (pre-norm) or its post-norm form; ``f(h,
        trace)`` is the attention or feed-forward on what the sub-layer reads."""
        s = self.spec
        res = inner = trace
        if trace.active:  # the sub-layer's own steps, as its modules declare them
            residual_steps, steps = self.declared[name]
            res, inner = trace.at(f"{name}_residual", residual_steps), trace.at(name, steps)
        h = f(residual_in(x, norm, s.norm, s.norm_first, res), inner)
        return residual_out(x, h, norm, s.norm, s.norm_first, s.dropout if self.training else 0.0, res)

    def _self_weights(self) -> tuple[NormWeights, AttentionWeights, NormWeights, NamedTuple]:
        return (
            self.attention_residual.weights(),
            self.attention.weights(),
            self.feed_forward_residual.weights(),
            self.feed_forward.weights(),
        )

    def _feed_forward(self, x: Tensor, w: BlockWeights, trace: Trace) -> Tensor:
        """The feed-forward sub-layer (``_sublayer`` written out: it runs at every token)."""
        s, norm = self.spec, w.feed_forward_norm
        res = inner = trace
        if trace.active:
            residual_steps, steps = self.declared["feed_forward"]
            res, inner = trace.at("feed_forward_residual", residual_steps), trace.at("feed_forward", steps)
        h = self.ffn_equations(residual_in(x, norm, s.norm, s.norm_first, res), w.feed_forward, self.act, inner)
        return residual_out(x, h, norm, s.norm, s.norm_first, s.dropout if self.training else 0.0, res)


class Block(_Sublayers):
    """``forward`` runs the block's equations (``run``) on its own weights; decoding reads the weights once
    (``weights(detach=True)``) and calls ``run`` for every token: one forward, without the cost of
    looking up a dozen parameters per token."""

    def __init__(self, spec: BlockSpec, rope: RotaryEmbedding | None = None) -> None:
        super().__init__(spec, rope, "causal" if spec.causal else "self")
        self.causal = spec.causal
        # the embedding shortcut (modded-nanogpt): λ of x ← λ₀ x + λ₁ x₀, the block's own input at the start
        self.shortcut = nn.Parameter(torch.tensor([1.0, 0.0])) if spec.shortcut else None
        self.shortcut_steps = {
            "shortcut": Step(
                "mix",
                "TC",
                "x ← λ₀ x + λ₁ x₀: x₀ the first block's input, λ learned (1 and 0 at the start)",
                None,
                "the stream mixed with the embeddings the first block read: every block keeps a direct line to them",
            )
        }

    def weights(self, detach: bool = False) -> BlockWeights:
        """Every parameter the block's equations read (detached: plain tensors, for decoding)."""
        w = BlockWeights(*self._self_weights(), shortcut=self.shortcut)
        return _detached(w) if detach else w  # type: ignore[return-value]

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
        values: list[Tensor] | None = None,
        x0: Tensor | None = None,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """The block's equations on the weights ``w`` (``weights()``): self-attention, then feed-forward,
        each inside its residual sub-layer. With ``cache`` (causal blocks), ``x`` holds the positions after
        the cached ones; ``layer`` is this block's place in the cache; ``values``: the first block's values,
        shared by the blocks of a value-residual model (``self_attention``); ``x0``: the first block's input,
        mixed into this block's with ``w.shortcut``; ``trace`` receives the steps."""
        if x0 is not None and w.shortcut is not None:
            mixed = w.shortcut[0] * x + w.shortcut[1] * x0  # (B, T, C)
            x = trace.declare(self.shortcut_steps)("shortcut", mixed, x, x0, w.shortcut) if trace.active else mixed
        (heads, rope, qk), s, norm = self.attend_with, self.spec, w.attention_norm
        res = inner = trace
        if trace.active:  # the sub-layer's own steps, as its modules declare them
            residual_steps, steps = self.declared["attention"]
            res, inner = trace.at("attention_residual", residual_steps), trace.at("attention", steps)
        h = residual_in(x, norm, s.norm, s.norm_first, res)  # ``_sublayer`` written out: it runs at every token
        h = self.self_attend(
            h,
            w.attention,
            heads,
            mask,
            causal=self.causal,
            cache=cache,
            layer=layer,
            rope=rope,
            qk_norm=qk,
            values=values,
            trace=inner,
        )
        x = residual_out(x, h, norm, s.norm, s.norm_first, s.dropout if self.training else 0.0, res)
        return self._feed_forward(x, w, trace)


class DecoderBlock(_Sublayers):
    """Masked self-attention -> cross-attention over the encoder output -> feed-forward."""

    def __init__(self, spec: BlockSpec) -> None:
        super().__init__(spec, None, "decoder", cross=True)

    def weights(self, detach: bool = False) -> BlockWeights:
        w = BlockWeights(*self._self_weights(), self.cross_attention_residual.weights(), self.cross_attention.weights())
        return _detached(w) if detach else w  # type: ignore[return-value]

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
        source padding; ``step``: ``cache``, ``layer``, ``trace`` as for ``Block`` and ``memory`` (the
        encoder output the keys and values came from, for the trace)."""
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
        memory: Tensor | None = None,
    ) -> Tensor:
        (heads, _, qk), cross = self.attend_with, w.cross_attention
        assert cross is not None and w.cross_attention_norm is not None  # a decoder block's weights

        def attend(h: Tensor, at: Trace) -> Tensor:
            return self.self_attend(
                h, w.attention, heads, self_mask, causal=True, cache=cache, layer=layer, qk_norm=qk, trace=at
            )

        def attend_memory(h: Tensor, at: Trace) -> Tensor:
            return cross_attention(h, memory_kv, cross, heads, memory_mask, at, memory)

        x = self._sublayer(x, w.attention_norm, attend, "attention", trace)
        x = self._sublayer(x, w.cross_attention_norm, attend_memory, "cross_attention", trace)
        return self._feed_forward(x, w, trace)

"""Position-wise feed-forward layers: what every feed-forward class declares (``FeedForwardLayer``), and
the posts' MLP, Dense(C -> F) -> activation -> Dense(F -> C) (``FeedForward``, chosen by ``ffn="mlp"``).

Shapes: B batch, T time, C channels, F hidden size (conventionally 4C).
A feed-forward class is built from the block's ``BlockSpec`` and declares everything about itself: its
weights (a named record), its equations (a function of the input, the weights and its nonlinearity, as
``feed_forward``), its steps with their kinds, equations and roles (``up``, ``down``, ``gate``), its rows
of the parameter table and the Dense that closes its residual branch. The classes are chosen by name in
``layers.variants``; the nonlinearities come from ``layers.activations``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import torch.nn.functional as F
from torch import Tensor, nn

from .activations import Activation, activation
from .spec import BlockSpec
from .steps import Count, Step, SummaryRow, dense
from .trace import NO_TRACE, Trace


class FeedForwardLayer(nn.Module):
    """What a feed-forward class declares (subclass it, and name it in ``layers.variants.FEED_FORWARDS``):
    ``about`` (what it is, in words: a GPT-2 export names it when GPT-2 has no such layer), ``equations``
    (a function ``(x (B, T, C), weights, act, trace) -> (B, T, C)``; blocks call it at every token),
    and, per instance, ``activation`` (the record of the nonlinearity it applies; ``act`` its function),
    ``steps`` (with their roles), ``weights()``, ``summary_rows(count)`` and ``closing()``."""

    about: ClassVar[str]
    activation: Activation
    act: Callable[[Tensor], Tensor]
    steps: dict[str, Step]

    def __init__(self, spec: BlockSpec, reads: str = "x", nonlinearity: str | None = None) -> None:
        """``reads``: what the layer reads, as its equations write it (``x``, ``LN(x)``); ``nonlinearity``:
        the activation's name when the class fixes it (SwiGLU's SiLU), else the spec's ``activation``."""
        super().__init__()
        self.activation = activation(nonlinearity or spec.activation)
        self.act = self.activation.function

    @staticmethod
    def equations(x: Tensor, w: Any, act: Callable[[Tensor], Tensor], trace: Trace = NO_TRACE) -> Tensor:  # noqa: ANN401
        """The layer's equations on its weights ``w`` (``weights()``): ``x (B, T, C)`` -> ``(B, T, C)``."""
        raise NotImplementedError

    def weights(self) -> NamedTuple:
        raise NotImplementedError

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        raise NotImplementedError

    def closing(self) -> nn.Linear:
        """The Dense whose output is what the layer adds to the residual stream (GPT-2's and zero init
        scale it)."""
        raise NotImplementedError

    def extra_repr(self) -> str:
        return f"activation={self.activation.name}"

    def forward(self, x: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        return type(self).equations(x, self.weights(), self.act, trace.declare(self.steps))


class FeedForwardWeights(NamedTuple):
    dense1: Tensor  # W₁ (F, C)
    bias1: Tensor | None  # b₁ (F,), or None without biases
    dense2: Tensor  # W₂ (C, F)
    bias2: Tensor | None  # b₂ (C,)


def feed_forward(x: Tensor, w: FeedForwardWeights, act: Callable[[Tensor], Tensor], trace: Trace = NO_TRACE) -> Tensor:
    """``x (B, T, C)`` -> ``(B, T, C)``; traced: ``hidden`` (after the activation) and ``out``."""
    dense1, bias1, dense2, bias2 = w  # read once: decoding runs this at every token
    h = act(F.linear(x, dense1, bias1))  # (B, T, C) @ (C, F) -> (B, T, F)
    if not trace.active:  # decoding and training: nothing to record (no call per step, at every token)
        return F.linear(h, dense2, bias2)  # (B, T, F) @ (F, C) -> (B, T, C)
    h = trace("hidden", h, x, dense1, bias1)
    return trace("out", F.linear(h, dense2, bias2), h, dense2, bias2)


def feed_forward_steps(act: Activation, reads: str = "x", bias: bool = True) -> dict[str, Step]:
    """The two steps as configured: the activation by name, applied to what the layer ``reads``. The posts'
    feed-forward is ReLU's (``Dense(32 => 128, relu)``); any other activation, or no biases, is not in the
    posts."""
    ours, post, words = dense(reads, "W₁", "b₁" if bias else None, post_x="x")
    out_ours, out_post, out_words = dense("h", "W₂", "b₂" if bias else None)
    in_posts = act.name == "relu" and bias
    return {
        "hidden": Step(
            f"activation:{act.name}",
            "TF",
            f"h = {act.written}({ours})",
            f"h = {act.post}.({post})" if in_posts else None,
            "the feed-forward's hidden units after the nonlinearity",
            computes=f"{words}, then the nonlinearity {act.written} on each entry",
            role="up",
        ),
        "out": Step(
            "projection",
            "TC",
            out_ours,
            out_post if bias else None,
            "what the feed-forward adds to the residual stream",
            computes=out_words,
            role="down",
        ),
    }


class FeedForward(FeedForwardLayer):
    """The posts' MLP: ``W₂ act(x W₁ᵀ + b₁) + b₂``, the activation by name (``spec.activation``)."""

    about = "the posts' MLP (a Dense, the nonlinearity, a Dense)"
    equations = staticmethod(feed_forward)

    def __init__(self, spec: BlockSpec, reads: str = "x") -> None:
        super().__init__(spec, reads)
        self.dense1 = nn.Linear(spec.dim, spec.dim_hidden, bias=spec.bias)
        self.dense2 = nn.Linear(spec.dim_hidden, spec.dim, bias=spec.bias)
        self.steps = feed_forward_steps(self.activation, reads, spec.bias)

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        """The two Dense layers, as the posts print them: ``Dense(32 => 128, relu)``."""
        (f, c), act = self.dense1.weight.shape, self.activation.name
        note = "" if self.dense1.bias is not None else "; bias=false"
        return [
            (0, ".dense1", f"Dense({c} => {f}, {act}{note})", count(self.dense1.parameters()), 0),
            (0, ".dense2", f"Dense({f} => {c}{note})", count(self.dense2.parameters()), 0),
        ]

    def weights(self) -> FeedForwardWeights:
        return FeedForwardWeights(self.dense1.weight, self.dense1.bias, self.dense2.weight, self.dense2.bias)

    def closing(self) -> nn.Linear:
        return self.dense2

"""Position-wise feed-forward network: Dense(C -> F) -> activation -> Dense(F -> C).

Shapes: B batch, T time, C channels, F hidden size (conventionally 4C).
``ACTIVATIONS`` is the one table of nonlinearities: configs check names against it, the feed-forward
and the pretraining head apply it. The equation is the function ``feed_forward``; the module holds
the two Dense layers and the steps they compute (``feed_forward_steps``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch.nn.functional as F
from torch import Tensor, nn

from .steps import Count, Step, SummaryRow, dense
from .trace import NO_TRACE, Trace

# gelu_tanh: the tanh approximation GPT-2 uses; relu2: ReLU squared, relu(a)² (So et al. 2021, "Primer"; the
# modded-nanogpt speedrun's feed-forward)
ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu2": lambda x: F.relu(x).square(),
}
_WRITTEN = {"relu": "ReLU", "gelu": "GELU", "gelu_tanh": "GELU_tanh", "relu2": "ReLU²"}  # how an equation writes each


class FeedForwardWeights(NamedTuple):
    dense1: Tensor  # W₁ (F, C)
    bias1: Tensor  # b₁ (F,)
    dense2: Tensor  # W₂ (C, F)
    bias2: Tensor  # b₂ (C,)


def feed_forward(x: Tensor, w: FeedForwardWeights, act: Callable[[Tensor], Tensor], trace: Trace = NO_TRACE) -> Tensor:
    """``x (B, T, C)`` -> ``(B, T, C)``; traced: ``hidden`` (after the activation) and ``out``."""
    dense1, bias1, dense2, bias2 = w  # read once: decoding runs this at every token
    h = act(F.linear(x, dense1, bias1))  # (B, T, C) @ (C, F) -> (B, T, F)
    if not trace.active:  # decoding and training: nothing to record (no call per step, at every token)
        return F.linear(h, dense2, bias2)  # (B, T, F) @ (F, C) -> (B, T, C)
    h = trace("hidden", h, x, dense1, bias1)
    return trace("out", F.linear(h, dense2, bias2), h, dense2, bias2)


def feed_forward_steps(activation: str, reads: str = "x") -> dict[str, Step]:
    """The two steps as configured: the activation by name, applied to what the layer ``reads``. The posts'
    feed-forward is ReLU's (``Dense(32 => 128, relu)``); any other activation is not in the posts."""
    act = _WRITTEN[activation]
    ours, post, words = dense(reads, "W₁", "b₁", post_x="x")
    out_ours, out_post, out_words = dense("h", "W₂", "b₂")
    return {
        "hidden": Step(
            f"activation:{activation}",
            "TF",
            f"h = {act}({ours})",
            f"h = relu.({post})" if activation == "relu" else None,
            "the feed-forward's hidden units after the nonlinearity",
            computes=f"{words}, then the nonlinearity {act} on each entry",
        ),
        "out": Step(
            "projection",
            "TC",
            out_ours,
            out_post,
            "what the feed-forward adds to the residual stream",
            computes=out_words,
        ),
    }


class FeedForward(nn.Module):
    def __init__(self, dim: int, dim_hidden: int, activation: str = "relu", reads: str = "x") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}")
        self.activation = activation
        self.act = ACTIVATIONS[activation]
        self.dense1 = nn.Linear(dim, dim_hidden)
        self.dense2 = nn.Linear(dim_hidden, dim)
        self.steps = feed_forward_steps(activation, reads)

    def extra_repr(self) -> str:
        return f"activation={self.activation}"

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        """The two Dense layers, as the posts print them: ``Dense(32 => 128, relu)``."""
        (f, c), act = self.dense1.weight.shape, self.activation
        return [
            (0, ".dense1", f"Dense({c} => {f}, {act})", count(self.dense1.parameters()), 0),
            (0, ".dense2", f"Dense({f} => {c})", count(self.dense2.parameters()), 0),
        ]

    def weights(self) -> FeedForwardWeights:
        return FeedForwardWeights(self.dense1.weight, self.dense1.bias, self.dense2.weight, self.dense2.bias)

    def forward(self, x: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        return feed_forward(x, self.weights(), self.act, trace.declare(self.steps))

"""Position-wise feed-forward network: Dense(C -> F) -> activation -> Dense(F -> C).

Shapes: B batch, T time, C channels, F hidden size (conventionally 4C).
``ACTIVATIONS`` is the one table of nonlinearities: configs check names against it, the feed-forward
and the pretraining head apply it. The equation is the function ``feed_forward``; the module holds
the two Dense layers.
"""

from __future__ import annotations

from collections.abc import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from .trace import NO_TRACE, Trace

# gelu_tanh: the tanh approximation GPT-2 uses
ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
}
FeedForwardWeights = tuple[Tensor, Tensor, Tensor, Tensor]  # dense1 (F, C), its bias (F,), dense2 (C, F), its bias (C,)


def feed_forward(x: Tensor, w: FeedForwardWeights, act: Callable[[Tensor], Tensor], trace: Trace = NO_TRACE) -> Tensor:
    """``x (B, T, C)`` -> ``(B, T, C)``; traced: ``hidden`` (after the activation) and ``out``."""
    h = trace("hidden", act(F.linear(x, w[0], w[1])))  # (B, T, C) @ (C, F) -> (B, T, F)
    return trace("out", F.linear(h, w[2], w[3]))  # (B, T, F) @ (F, C) -> (B, T, C)


class FeedForward(nn.Module):
    def __init__(self, dim: int, dim_hidden: int, activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}")
        self.activation = activation
        self.act = ACTIVATIONS[activation]
        self.dense1 = nn.Linear(dim, dim_hidden)
        self.dense2 = nn.Linear(dim_hidden, dim)

    def extra_repr(self) -> str:
        return f"activation={self.activation}"

    def weights(self) -> FeedForwardWeights:
        return self.dense1.weight, self.dense1.bias, self.dense2.weight, self.dense2.bias

    def forward(self, x: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        return feed_forward(x, self.weights(), self.act, trace)

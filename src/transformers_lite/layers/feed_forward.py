"""Position-wise feed-forward network: Dense(C -> F) -> activation -> Dense(F -> C).

Shapes: B batch, T time, C channels, F hidden size (conventionally 4C).
``ACTIVATIONS`` is the one table of nonlinearities: configs check names against it, the feed-forward
and the pretraining head apply it.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .trace import NO_TRACE, Trace

# gelu_tanh: the tanh approximation GPT-2 uses
ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}


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

    def forward(self, x: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        """``x (B, T, C)`` -> ``(B, T, C)``; traced: ``hidden`` (after the activation) and ``out``."""
        h = trace("hidden", self.act(self.dense1(x)))  # (B, T, C) @ (C, F) -> (B, T, F)
        return trace("out", self.dense2(h))  # (B, T, F) @ (F, C) -> (B, T, C)

"""SwiGLU, the gated feed-forward of Llama, Mistral and Qwen (Shazeer 2020, "GLU Variants Improve
Transformer"): ``ffn="swiglu"``.

    g = SiLU(x W_gᵀ)      the gate: a Dense and post 001's softrelu, a σ(a)
    u = x W_uᵀ            the up projection
    h = g ⊙ u             the gate scales each hidden unit
    y = h W_dᵀ            the down projection, back to the residual stream

Shapes: B batch, T time, C channels, F hidden units. Three matrices where the posts' MLP has two, so a
SwiGLU of the same size as a 4C MLP has F ≈ 8C/3 (Llama's choice). Biases follow the spec's ``bias``
(Llama has none). Not in the posts: every step's posts' column says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch.nn.functional as F
from torch import Tensor, nn

from .activations import Activation
from .feed_forward import FeedForwardLayer
from .spec import BlockSpec
from .steps import Count, Step, SummaryRow, dense
from .trace import NO_TRACE, Trace


class SwiGLUWeights(NamedTuple):
    gate: Tensor  # W_g (F, C)
    gate_bias: Tensor | None  # (F,), or None
    up: Tensor  # W_u (F, C)
    up_bias: Tensor | None
    down: Tensor  # W_d (C, F)
    down_bias: Tensor | None  # (C,)


def swiglu(x: Tensor, w: SwiGLUWeights, act: Callable[[Tensor], Tensor], trace: Trace = NO_TRACE) -> Tensor:
    """``x (B, T, C)`` -> ``(B, T, C)``: ``(act(x W_gᵀ) ⊙ x W_uᵀ) W_dᵀ``; traced: ``gate``, ``up``, ``hidden``
    and ``out``."""
    gate, gate_bias, up, up_bias, down, down_bias = w
    g = act(F.linear(x, gate, gate_bias))  # (B, T, C) @ (C, F) -> (B, T, F)
    u = F.linear(x, up, up_bias)  # (B, T, C) @ (C, F) -> (B, T, F)
    if not trace.active:
        return F.linear(g * u, down, down_bias)  # (B, T, F) @ (F, C) -> (B, T, C)
    g, u = trace("gate", g, x, gate, gate_bias), trace("up", u, x, up, up_bias)
    h = trace("hidden", g * u, g, u)  # (B, T, F)
    return trace("out", F.linear(h, down, down_bias), h, down, down_bias)


def swiglu_steps(act: Activation, reads: str, bias: bool) -> dict[str, Step]:
    """The four steps as configured: what the layer ``reads`` (``x``, ``RMS(x)``), biases or none."""
    gate, _, gate_words = dense(reads, "W_g", "b_g" if bias else None)
    up, _, up_words = dense(reads, "W_u", "b_u" if bias else None)
    down, _, down_words = dense("h", "W_d", "b_d" if bias else None)
    return {
        "gate": Step(
            f"activation:{act.name}",
            "TF",
            f"g = {act.written}({gate})",
            None,
            "the gate: how much of each hidden unit passes (near 0 shuts it, large lets it through)",
            computes=f"{gate_words}, then the nonlinearity {act.written} on each entry",
            role="gate",
        ),
        "up": Step(
            "projection", "TF", f"u = {up}", None, "the hidden units before the gate", computes=up_words, role="up"
        ),
        "hidden": Step(
            "product",
            "TF",
            "h = g ⊙ u",
            None,
            "the feed-forward's hidden units: each up-projected unit scaled by its gate",
            computes="the gate g times the up projection u, entry by entry",
        ),
        "out": Step(
            "projection",
            "TC",
            down,
            None,
            "what the feed-forward adds to the residual stream",
            computes=down_words,
            role="down",
        ),
    }


class SwiGLU(FeedForwardLayer):
    """Llama's feed-forward: a SiLU gate times an up projection, then a down projection."""

    about = "a SwiGLU feed-forward (a SiLU gate times an up projection; GPT-2's is an MLP)"
    equations = staticmethod(swiglu)

    def __init__(self, spec: BlockSpec, reads: str = "x") -> None:
        super().__init__(spec, reads, "silu")
        self.gate = nn.Linear(spec.dim, spec.dim_hidden, bias=spec.bias)
        self.up = nn.Linear(spec.dim, spec.dim_hidden, bias=spec.bias)
        self.down = nn.Linear(spec.dim_hidden, spec.dim, bias=spec.bias)
        self.steps = swiglu_steps(self.activation, reads, spec.bias)

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        """``Dense(C => F, silu)`` for the gate, then the up and down Dense layers."""
        (f, c), note = self.gate.weight.shape, "" if self.gate.bias is not None else "; bias=false"
        return [
            (0, ".gate", f"Dense({c} => {f}, {self.activation.name}{note})", count(self.gate.parameters()), 0),
            (0, ".up", f"Dense({c} => {f}{note})", count(self.up.parameters()), 0),
            (0, ".down", f"Dense({f} => {c}{note})", count(self.down.parameters()), 0),
        ]

    def weights(self) -> SwiGLUWeights:
        g, u, d = self.gate, self.up, self.down
        return SwiGLUWeights(g.weight, g.bias, u.weight, u.bias, d.weight, d.bias)

    def closing(self) -> nn.Linear:
        return self.down

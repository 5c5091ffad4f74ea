"""Normalisation layers, one table of them: each row of ``x (..., C)`` normalised, then scaled.

``NORMS`` maps a norm's name to its equation (a function of ``x``, its weights and ε), whether it has
a bias β, and the words of its step; ``Norm`` is the module a ``NormSpec`` names, used by every
residual sub-layer, final norm and (with QK-norm) attention. A new norm is one entry here, its hand
rule in ``backprop.rules`` (kind ``norm:NAME``) and its name accepted by the config.

* ``layer``: ``LN(x) = γ ⊙ (x − μ) / √(σ² + ε) + β`` over the last axis (PyTorch's; the posts' LayerNorm
  divides by ``σ + ε``, seed 000: ``a (X − μ) / (σ + ε) + b`` per column; ``backprop.ops.layer_norm_posts_*``
  keeps theirs).
* ``rms``: ``RMS(x) = γ ⊙ x / √(mean(x²) + ε)``: no mean subtracted, no β (Zhang & Sennrich 2019; LLaMA,
  modded-nanogpt): a little cheaper, and as good in most modern GPTs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .steps import Count, Step, SummaryRow


class NormWeights(NamedTuple):
    weight: Tensor  # γ (C,)
    bias: Tensor | None  # β (C,), or None for a norm without one


@dataclass(frozen=True)
class NormSpec:
    """Which norm (a key of ``NORMS``) and its ε."""

    name: str = "layer"
    eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.name not in NORMS:
            raise ValueError(f"unknown norm {self.name!r}; choose one of {', '.join(NORMS)}")
        # its equation, kept on the record: decoding applies it nine times a token
        object.__setattr__(self, "apply", NORMS[self.name].apply)

    apply: Callable[[Tensor, NormWeights, float], Tensor] = field(init=False, repr=False, compare=False)


def layer_norm(x: Tensor, w: NormWeights, eps: float) -> Tensor:
    """LayerNorm over the last axis: the op ``F.layer_norm`` calls, without its Python wrapper (decoding
    pays for every call: nine per token for a 4-block GPT)."""
    weight, bias = w
    return torch.layer_norm(x, x.shape[-1:], weight, bias, eps)


def rms_norm(x: Tensor, w: NormWeights, eps: float) -> Tensor:
    """RMSNorm over the last axis: each row divided by its root mean square, then scaled by γ."""
    return F.rms_norm(x, x.shape[-1:], w.weight, eps)


@dataclass(frozen=True)
class NormKind:
    apply: Callable[[Tensor, NormWeights, float], Tensor]
    bias: bool  # whether it adds a learned β
    symbol: str  # how an equation writes it: LN(x)
    ours: str  # its equation, with {x}, {xp} (x in parentheses when it is a sum) and {eps}
    post: str | None  # the posts' equation of it, with {x}; None: no post has this norm
    title: str  # the parameter table's name
    words: str  # what it computes, in words (``Step.computes``)


NORMS: dict[str, NormKind] = {
    "layer": NormKind(
        layer_norm,
        True,
        "LN",
        "LN({x}) = γ ⊙ ({x} − μ) / √(σ² + ε) + β, ε = {eps}",
        "LayerNorm({x}) = a ⊙ (X − μ) / (σ + ε) + b, for each column X",  # seed 000: σ + ε, not √(σ² + ε)
        "LayerNorm",
        "a layer norm: each row minus its mean μ, divided by √(σ² + ε) (σ² its variance), then scaled by γ and "
        "shifted by β",
    ),
    "rms": NormKind(
        rms_norm,
        False,
        "RMS",
        "RMS({x}) = γ ⊙ {xp} / √(mean({xp}²) + ε), ε = {eps}",
        None,
        "RMSNorm",
        "an RMS norm: each row divided by its root mean square √(mean(x²) + ε), then scaled by γ (no mean "
        "subtracted, no β)",
    ),
}


def norm_of(spec: NormSpec, x: str) -> str:
    """The symbol of ``x`` normed: ``LN(x)``."""
    return f"{NORMS[spec.name].symbol}({x})"


def norm_step(spec: NormSpec, x: str, meaning: str, axes: str = "TC", *, in_posts: bool = False) -> Step:
    """The step of normalising ``x`` (its kind ``norm:NAME`` picks the hand rule). ``in_posts``: the posts
    normalise here (a post-norm sub-layer's output); their equation is quoted if they have this norm."""
    kind = NORMS[spec.name]
    return Step(
        f"norm:{spec.name}",
        axes,
        kind.ours.format(x=x, xp=f"({x})" if " " in x else x, eps=f"{spec.eps:g}"),  # xp: a sum in parentheses
        kind.post.format(x=x) if in_posts and kind.post else None,
        meaning,
        eps=spec.eps,
        computes=kind.words,
    )


class Norm(nn.Module):
    """The weights of the norm ``spec`` names over ``dim`` channels (γ = 1, β = 0 at the start); the
    equation is ``NORMS[spec.name].apply``."""

    def __init__(self, dim: int, spec: NormSpec) -> None:
        super().__init__()
        self.spec = spec
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias: nn.Parameter | None
        self.register_parameter("bias", nn.Parameter(torch.zeros(dim)) if NORMS[spec.name].bias else None)
        self.normalise = NORMS[spec.name].apply

    @property
    def eps(self) -> float:
        return self.spec.eps

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.spec.eps:g}"

    def weights(self) -> NormWeights:
        return NormWeights(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.normalise(x, self.weights(), self.spec.eps)

    def title(self) -> str:
        """As the parameter table names it: ``LayerNorm(32)``."""
        return f"{NORMS[self.spec.name].title}({self.weight.shape[0]})"

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        return [(0, "", self.title(), count(self.parameters()), 0)]

"""One residual sub-layer, used around every attention and feed-forward layer of every block.

Shapes: B batch, T time, C channels. With ``f`` the sub-layer (attention or feed-forward)::

    post-norm (the posts, "Attention is all you need"):  y = LayerNorm(x + Dropout(f(x)))
    pre-norm  (GPT-2 and most modern models):           y = x + Dropout(f(LayerNorm(x)))

Pre-norm keeps an unnormalised path from input to output, which makes deep stacks easier to train;
the posts use post-norm, so it is the default. The equations are two functions, ``residual_in`` (what
``f`` reads) and ``residual_out`` (the sum, normalised for post-norm), so that a block can run them
on its weights read once (``Block.run``); traced steps: ``norm`` (the LayerNorm's output) and ``sum``
(``x + f``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .trace import NO_TRACE, Trace

Norm = tuple[Tensor, Tensor, float]  # a LayerNorm's weight (C,), bias (C,) and epsilon


def layer_norm(x: Tensor, norm: Norm) -> Tensor:
    """LayerNorm over the last dimension: the op ``F.layer_norm`` calls, without its Python wrapper
    (decoding pays for every call: nine per token for a 4-block GPT)."""
    return torch.layer_norm(x, x.shape[-1:], norm[0], norm[1], norm[2])


def residual_in(x: Tensor, norm: Norm, norm_first: bool, trace: Trace = NO_TRACE) -> Tensor:
    """What the sub-layer reads: ``LayerNorm(x)`` for pre-norm, ``x`` itself for post-norm."""
    if not norm_first:
        return x
    return trace("norm", layer_norm(x, norm))


def residual_out(
    x: Tensor, fx: Tensor, norm: Norm, norm_first: bool, dropout: float = 0.0, trace: Trace = NO_TRACE
) -> Tensor:
    """``x + Dropout(f(x))``, then (post-norm) its LayerNorm: the sub-layer's output ``(B, T, C)``.
    ``dropout`` is the rate in effect (0 when evaluating)."""
    total = trace("sum", x + (F.dropout(fx, dropout, True) if dropout > 0 else fx))
    if norm_first:
        return total
    return trace("norm", layer_norm(total, norm))


class Residual(nn.Module):
    """The LayerNorm and dropout of one sub-layer (the equations are the functions above)."""

    def __init__(self, dim: int, dropout: float = 0.0, norm_first: bool = False, eps: float = 1e-5) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.norm = nn.LayerNorm(dim, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def extra_repr(self) -> str:
        return "pre-norm" if self.norm_first else "post-norm"

    def weights(self) -> Norm:
        return self.norm.weight, self.norm.bias, self.norm.eps

    def rate(self) -> float:
        """The dropout rate in effect: the module's when training, 0 when evaluating."""
        return self.dropout.p if self.training else 0.0

    def enter(self, x: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        return residual_in(x, self.weights(), self.norm_first, trace)

    def leave(self, x: Tensor, fx: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        return residual_out(x, fx, self.weights(), self.norm_first, self.rate(), trace)


def maybe_dropout(dropout: nn.Dropout, x: Tensor) -> Tensor:
    """Dropout, skipped outright when it is the identity (evaluation, or p = 0): decoding one token
    at a time pays for every module call."""
    return dropout(x) if dropout.training and dropout.p > 0 else x

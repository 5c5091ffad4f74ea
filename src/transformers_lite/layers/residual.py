"""One residual sub-layer, used around every attention and feed-forward layer of every block.

Shapes: B batch, T time, C channels. With ``f`` the sub-layer (attention or feed-forward)::

    post-norm (the posts, "Attention is all you need"):  y = LayerNorm(x + Dropout(f(x)))
    pre-norm  (GPT-2 and most modern models):           y = x + Dropout(f(LayerNorm(x)))

Pre-norm keeps an unnormalised path from input to output, which makes deep stacks easier to train;
the posts use post-norm, so it is the default. A block calls ``enter`` (what ``f`` reads) and ``leave``
(the sum, normalised for post-norm) around its sub-layer, so each step can be traced: ``norm`` (the
LayerNorm's output) and ``sum`` (``x + f``).
"""

from __future__ import annotations

from torch import Tensor, nn

from .trace import NO_TRACE, Trace


class Residual(nn.Module):
    def __init__(self, dim: int, dropout: float = 0.0, norm_first: bool = False, eps: float = 1e-5) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.norm = nn.LayerNorm(dim, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def extra_repr(self) -> str:
        return "pre-norm" if self.norm_first else "post-norm"

    def enter(self, x: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        """What the sub-layer reads: ``LayerNorm(x)`` for pre-norm, ``x`` itself for post-norm."""
        return trace("norm", self.norm(x)) if self.norm_first else x

    def leave(self, x: Tensor, fx: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        """``x + Dropout(f(x))``, then (post-norm) its LayerNorm: the sub-layer's output ``(B, T, C)``."""
        total = trace("sum", x + maybe_dropout(self.dropout, fx))
        return total if self.norm_first else trace("norm", self.norm(total))


def maybe_dropout(dropout: nn.Dropout, x: Tensor) -> Tensor:
    """Dropout, skipped outright when it is the identity (evaluation, or p = 0): decoding one token
    at a time pays for every module call."""
    return dropout(x) if dropout.training and dropout.p > 0 else x

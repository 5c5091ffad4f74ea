"""One residual sub-layer, used around every attention and feed-forward layer of every block.

Shapes: B batch, T time, C channels. With ``f`` the sub-layer (attention or feed-forward)::

    post-norm (the seeds, "Attention is all you need"):  y = LayerNorm(x + Dropout(f(x)))
    pre-norm  (GPT-2 and most modern models):           y = x + Dropout(f(LayerNorm(x)))

Pre-norm keeps an unnormalised path from input to output, which makes deep stacks easier to train;
the seeds use post-norm, so it is the default.
"""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor, nn


class Residual(nn.Module):
    def __init__(self, dim: int, dropout: float = 0.0, norm_first: bool = False, eps: float = 1e-5) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.norm = nn.LayerNorm(dim, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def extra_repr(self) -> str:
        return "pre-norm" if self.norm_first else "post-norm"

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """``x (B, T, C)`` -> ``(B, T, C)`` around ``sublayer``."""
        if self.norm_first:
            return x + maybe_dropout(self.dropout, sublayer(self.norm(x)))
        return self.norm(x + maybe_dropout(self.dropout, sublayer(x)))


def maybe_dropout(dropout: nn.Dropout, x: Tensor) -> Tensor:
    """Dropout, skipped outright when it is the identity (evaluation, or p = 0): decoding one token
    at a time pays for every module call."""
    return dropout(x) if dropout.training and dropout.p > 0 else x

"""One residual sub-layer, used around every attention and feed-forward layer of every block.

Shapes: B batch, T time, C channels. With ``f`` the sub-layer (attention or feed-forward)::

    post-norm (the posts, "Attention is all you need"):  y = LN(x + Dropout(f(x)))
    pre-norm  (GPT-2 and most modern models):           y = x + Dropout(f(LN(x)))

Pre-norm keeps an unnormalised path from input to output, which makes deep stacks easier to train;
the posts use post-norm, so it is the default. The equations are two functions, ``residual_in`` (what
``f`` reads) and ``residual_out`` (the sum, normalised for post-norm), so that a block can run them
on its weights read once (``Block.run``); traced steps (``residual_steps``): ``norm`` (the norm's
output) and ``sum`` (``x + f``).
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .norms import Norm, NormSpec, NormWeights, norm_of, norm_step
from .steps import Count, Step, SummaryRow
from .trace import NO_TRACE, Trace


def residual_in(x: Tensor, norm: NormWeights, spec: NormSpec, norm_first: bool, trace: Trace = NO_TRACE) -> Tensor:
    """What the sub-layer reads: the norm of ``x`` for pre-norm, ``x`` itself for post-norm."""
    if not norm_first:
        return x
    normed = spec.apply(x, norm, spec.eps)
    return trace("norm", normed, x, *norm) if trace.active else normed


def residual_out(
    x: Tensor,
    fx: Tensor,
    norm: NormWeights,
    spec: NormSpec,
    norm_first: bool,
    dropout: float = 0.0,
    trace: Trace = NO_TRACE,
) -> Tensor:
    """``x + Dropout(f(x))``, then (post-norm) its norm: the sub-layer's output ``(B, T, C)``.
    ``dropout`` is the rate in effect (0 when evaluating)."""
    total = x + (F.dropout(fx, dropout, True) if dropout > 0 else fx)
    if trace.active:
        total = trace("sum", total, x, fx)
    if norm_first:
        return total
    normed = spec.apply(total, norm, spec.eps)
    return trace("norm", normed, total, *norm) if trace.active else normed


def residual_steps(branch: str, spec: NormSpec, norm_first: bool, dropout: float) -> dict[str, Step]:
    """The steps of a residual sub-layer around ``branch`` (``MHA``, ``FFN``, ``cross-MHA``) as configured."""
    if dropout:
        kept = f" (Dropout({dropout:g}) on {branch}'s output while training)"
    else:
        kept = ""
    if norm_first:
        inner = f"{branch}({norm_of(spec, 'x')})"
        return {
            "norm": norm_step(spec, "x", f"the residual stream normalised: what {branch} reads"),
            "sum": Step(
                "residual_sum",
                "TC",
                f"x + {inner}{kept}",
                None,  # the posts' blocks are post-norm: no post adds a sub-layer of the normed stream
                f"the residual stream after this sub-layer: {branch}'s output added to it",
            ),
        }
    return {
        "sum": Step(
            "residual_sum",
            "TC",
            f"x + {branch}(x){kept}",
            f"x + {branch}(x)",
            f"the stream plus what {branch} adds, before the norm",
        ),
        "norm": norm_step(
            spec, f"x + {branch}(x)", "the sub-layer's output, normalised (post-norm, as the posts)", in_posts=True
        ),
    }


class Residual(nn.Module):
    """The norm and dropout of one sub-layer around ``branch`` (the equations are the functions above)."""

    def __init__(
        self,
        dim: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        spec: NormSpec | float | None = None,
        branch: str = "f",
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        # a number is a layer norm's ε, as this argument was before norms had a kind
        self.spec = NormSpec(eps=spec) if isinstance(spec, (int, float)) else spec or NormSpec()
        self.norm = Norm(dim, self.spec)
        self.dropout = nn.Dropout(dropout)
        self.steps = residual_steps(branch, self.spec, norm_first, dropout)

    def extra_repr(self) -> str:
        return "pre-norm" if self.norm_first else "post-norm"

    def weights(self) -> NormWeights:
        return self.norm.weights()

    def rate(self) -> float:
        """The dropout rate in effect: the module's when training, 0 when evaluating."""
        return self.dropout.p if self.training else 0.0

    def enter(self, x: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        return residual_in(x, self.weights(), self.spec, self.norm_first, trace.declare(self.steps))

    def leave(self, x: Tensor, fx: Tensor, trace: Trace = NO_TRACE) -> Tensor:
        return residual_out(x, fx, self.weights(), self.spec, self.norm_first, self.rate(), trace.declare(self.steps))

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        """One row: ``Residual(LayerNorm(32), Dropout(0.1), post-norm)``."""
        drop = f", Dropout({self.dropout.p})" if self.dropout.p > 0 else ""
        return [(0, "", f"Residual({self.norm.title()}{drop}, {self.extra_repr()})", count(self.parameters()), 0)]


def maybe_dropout(dropout: nn.Dropout, x: Tensor) -> Tensor:
    """Dropout, skipped outright when it is the identity (evaluation, or p = 0): decoding one token
    at a time pays for every module call."""
    return dropout(x) if dropout.training and dropout.p > 0 else x

"""Classifier heads that turn encoder outputs ``(B, T, C)`` into logits ``(B, K)``.

* ``FlattenHead`` (post 000's head): Dense(C -> 1) scores each position, flatten to ``(B, T)``, then
  Dense(T -> K). It learns a weight per *position*, so inputs must be padded to exactly
  ``max_length``.
* ``MeanPoolHead``: the mean of the valid (non-padding) positions, then Dense(C -> K). Padding
  cannot change the result and any length works.

Traced steps: ``scores`` (the flatten head's one number per position) or ``pooled`` (the mean), and
``logits``.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .steps import Step, dense
from .trace import NO_TRACE, Trace


def _logits(x: str, meaning: str = "one score per class", *, in_posts: bool = True) -> Step:
    ours, post, words = dense(x, "W_out", "b_out")
    return Step("projection", "K", f"z = {ours}", f"z = {post}" if in_posts else None, meaning, computes=words)


class FlattenHead(nn.Module):
    def __init__(self, dim: int, max_length: int, n_labels: int) -> None:
        super().__init__()
        self.max_length = max_length
        self.dense_token = nn.Linear(dim, 1)
        self.dense_out = nn.Linear(max_length, n_labels)
        ours, post, words = dense("x", "w_token", "b_token")
        self.steps = {
            "scores": Step(
                "projection",
                "T",
                f"s = {ours}: one number per position (C → 1), flattened",
                f"s = flatten({post})",
                "one score per word, the flatten head's first Dense (post 000)",
                computes=f"{words}: one number per position",
            ),
            "logits": _logits("s", f"one score per class, from the {max_length} positions' scores"),
        }

    def forward(self, x: Tensor, valid: Tensor | None = None, trace: Trace = NO_TRACE) -> Tensor:
        if x.shape[1] != self.max_length:
            raise ValueError(
                f"the flatten head needs inputs padded to exactly max_length={self.max_length} tokens, got {x.shape[1]}"
            )
        trace = trace.declare(self.steps)
        token, out = self.dense_token, self.dense_out
        h = F.linear(x, token.weight, token.bias).squeeze(-1)  # (B, T, C) -> (B, T, 1) -> (B, T)
        h = trace("scores", h, x, token.weight, token.bias)
        return trace("logits", F.linear(h, out.weight, out.bias), h, out.weight, out.bias)  # (B, T) @ (T, K) -> (B, K)


class MeanPoolHead(nn.Module):
    def __init__(self, dim: int, n_labels: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.dense_out = nn.Linear(dim, n_labels)
        self.steps = {
            "pooled": Step(
                "mean_pool",
                "C",
                "x̄ = (1/n) Σ_t x[t] over the n words read (padding left out)",
                None,  # post 000 names a mean as a choice but aggregates with a Dense (the flatten head)
                "the review as one vector: the mean of its words' vectors",
            ),
            "logits": _logits("x̄", in_posts=False),
        }

    def forward(self, x: Tensor, valid: Tensor | None = None, trace: Trace = NO_TRACE) -> Tensor:
        if valid is None:
            pooled = x.mean(dim=1)  # (B, T, C) -> (B, C)
        else:
            w = valid.to(x.dtype).unsqueeze(-1)  # (B, T, 1)
            pooled = (x * w).sum(dim=1) / w.sum(dim=1).clamp(min=1.0)  # (B, C)
        trace = trace.declare(self.steps)
        pooled = trace("pooled", pooled, x, valid)
        out = self.dense_out
        logits = F.linear(self.dropout(pooled), out.weight, out.bias)  # (B, C) @ (C, K) -> (B, K)
        return trace("logits", logits, pooled, out.weight, out.bias)

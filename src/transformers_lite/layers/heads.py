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

from torch import Tensor, nn

from .trace import NO_TRACE, Trace


class FlattenHead(nn.Module):
    def __init__(self, dim: int, max_length: int, n_labels: int) -> None:
        super().__init__()
        self.max_length = max_length
        self.dense_token = nn.Linear(dim, 1)
        self.dense_out = nn.Linear(max_length, n_labels)

    def forward(self, x: Tensor, valid: Tensor | None = None, trace: Trace = NO_TRACE) -> Tensor:
        if x.shape[1] != self.max_length:
            raise ValueError(
                f"the flatten head needs inputs padded to exactly max_length={self.max_length} tokens, got {x.shape[1]}"
            )
        h = trace("scores", self.dense_token(x).squeeze(-1))  # (B, T, C) -> (B, T, 1) -> (B, T)
        return trace("logits", self.dense_out(h))  # (B, T) @ (T, K) -> (B, K)


class MeanPoolHead(nn.Module):
    def __init__(self, dim: int, n_labels: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.dense_out = nn.Linear(dim, n_labels)

    def forward(self, x: Tensor, valid: Tensor | None = None, trace: Trace = NO_TRACE) -> Tensor:
        if valid is None:
            pooled = x.mean(dim=1)  # (B, T, C) -> (B, C)
        else:
            w = valid.to(x.dtype).unsqueeze(-1)  # (B, T, 1)
            pooled = (x * w).sum(dim=1) / w.sum(dim=1).clamp(min=1.0)  # (B, C)
        pooled = trace("pooled", pooled)
        return trace("logits", self.dense_out(self.dropout(pooled)))  # (B, C) @ (C, K) -> (B, K)

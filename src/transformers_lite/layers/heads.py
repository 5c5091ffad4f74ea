"""Classifier heads that turn encoder outputs ``(B, T, C)`` into logits ``(B, K)``.

* ``SeedHead`` (seed 000): Dense(C -> 1) scores each position, flatten to ``(B, T)``, then
  Dense(T -> K). It learns a weight per *position*, so inputs must be padded to exactly
  ``max_length``.
* ``MeanPoolHead``: the mean of the valid (non-padding) positions, then Dense(C -> K). Padding
  cannot change the result and any length works.
"""

from __future__ import annotations

from torch import Tensor, nn


class SeedHead(nn.Module):
    def __init__(self, dim: int, max_length: int, n_labels: int) -> None:
        super().__init__()
        self.max_length = max_length
        self.dense_token = nn.Linear(dim, 1)
        self.dense_out = nn.Linear(max_length, n_labels)

    def forward(self, x: Tensor, valid: Tensor | None = None) -> Tensor:
        if x.shape[1] != self.max_length:
            raise ValueError(
                f"the seed head needs inputs padded to exactly max_length={self.max_length} tokens, got {x.shape[1]}"
            )
        h = self.dense_token(x).squeeze(-1)  # (B, T, C) -> (B, T, 1) -> (B, T)
        return self.dense_out(h)  # (B, T) @ (T, K) -> (B, K)


class MeanPoolHead(nn.Module):
    def __init__(self, dim: int, n_labels: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.dense_out = nn.Linear(dim, n_labels)

    def forward(self, x: Tensor, valid: Tensor | None = None) -> Tensor:
        if valid is None:
            pooled = x.mean(dim=1)  # (B, T, C) -> (B, C)
        else:
            w = valid.to(x.dtype).unsqueeze(-1)  # (B, T, 1)
            pooled = (x * w).sum(dim=1) / w.sum(dim=1).clamp(min=1.0)  # (B, C)
        return self.dense_out(self.dropout(pooled))  # (B, C) @ (C, K) -> (B, K)

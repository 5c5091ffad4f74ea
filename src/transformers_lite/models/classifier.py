"""Review classifier (seed 000): embedding -> position encoding -> encoder blocks -> head.

Shapes: B batch, T tokens (at most ``max_length``), C channels, K labels.
"""

from __future__ import annotations

from torch import Tensor, nn

from ..config import ClassifierConfig
from ..layers import MeanPoolHead, SeedHead
from .encoder import build_encoder, check_inputs, run_encoder


class TransformerClassifier(nn.Module):
    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        self.config = c = config
        build_encoder(self, c)  # embedding, position_encoding, input_dropout, blocks, final_norm
        if c.head == "seed":
            self.head: nn.Module = SeedHead(c.dim, c.max_length, c.n_labels)
        else:
            self.head = MeanPoolHead(c.dim, c.n_labels, c.head_dropout)

    def forward(self, ids: Tensor, valid: Tensor | None = None) -> Tensor:
        """``ids (B, T)``, ``valid (B, T)`` bool (True = real token) -> logits ``(B, K)``.

        When the config has a ``pad_id`` and no ``valid`` is given, it is derived from the ids.
        """
        ids, valid = check_inputs(ids, valid, self.config.max_length, self.config.pad_id)
        x = run_encoder(self, ids, valid)  # (B, T, C)
        return self.head(x, valid)  # (B, K)

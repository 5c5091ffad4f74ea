"""Review classifier (seed 000): embedding -> position encoding -> encoder blocks -> head.

Shapes: B batch, T tokens (at most ``max_length``), C channels, K labels.
"""

from __future__ import annotations

from torch import Tensor, nn

from ..config import ClassifierConfig
from ..layers import EncoderBlock, MeanPoolHead, SeedHead, SinusoidalPositionEncoding, TokenEmbedding
from ..layers.masks import attention_mask, padding_mask_from_ids


class TransformerClassifier(nn.Module):
    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        self.config = c = config
        self.embedding = TokenEmbedding(c.vocab_size, c.dim, init_std=1.0)
        self.position_encoding = SinusoidalPositionEncoding(c.dim, c.position_encoding_length)
        self.blocks = nn.ModuleList(
            EncoderBlock(
                c.n_heads,
                c.dim,
                c.dim_hidden,
                dropout=c.dropout,
                activation=c.activation,
                norm_first=c.norm_first,
                qkv_bias=c.qkv_bias,
            )
            for _ in range(c.n_blocks)
        )
        self.final_norm = nn.LayerNorm(c.dim) if c.norm_first else None
        if c.head == "seed":
            self.head: nn.Module = SeedHead(c.dim, c.max_length, c.n_labels)
        else:
            self.head = MeanPoolHead(c.dim, c.n_labels, c.head_dropout)

    def forward(self, ids: Tensor, valid: Tensor | None = None) -> Tensor:
        """``ids (B, T)``, ``valid (B, T)`` bool (True = real token) -> logits ``(B, K)``.

        When the config has a ``pad_id`` and no ``valid`` is given, it is derived from the ids.
        """
        if ids.dim() == 1:
            ids = ids.unsqueeze(0)  # one sample -> a batch of one
        if ids.shape[1] > self.config.max_length:
            raise ValueError(f"input of {ids.shape[1]} tokens exceeds max_length={self.config.max_length}")
        if valid is None and self.config.pad_id is not None:
            valid = padding_mask_from_ids(ids, self.config.pad_id)
        if valid is not None and valid.shape != ids.shape:
            raise ValueError(f"valid mask shape {tuple(valid.shape)} does not match ids shape {tuple(ids.shape)}")
        x = self.embedding(ids) + self.position_encoding(ids.shape[1])  # (B, T, C) + (T, C)
        mask = attention_mask(valid)  # (B, 1, 1, T) or None
        for block in self.blocks:
            x = block(x, mask)  # (B, T, C)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.head(x, valid)  # (B, K)

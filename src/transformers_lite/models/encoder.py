"""The encoder the classifier and the pretraining model share: embedding -> sinusoidal position
encoding -> (input dropout) -> encoder blocks -> [final norm].

Both models call ``build_encoder`` in their constructor, so the parameters carry the same names
(``embedding``, ``blocks.*``, ``final_norm``) and a pretrained encoder loads into a classifier by name.

Shapes: B batch, T tokens, C channels.
"""

from __future__ import annotations

from torch import Tensor, nn

from ..layers import EncoderBlock, SinusoidalPositionEncoding, TokenEmbedding, maybe_dropout
from ..layers.masks import attention_mask, padding_mask_from_ids


def build_encoder(module: nn.Module, c) -> None:  # noqa: ANN001 - ClassifierConfig or EncoderLMConfig
    """Give ``module`` the encoder's layers as attributes."""
    module.embedding = TokenEmbedding(c.vocab_size, c.dim, init_std=1.0)  # seed 000's N(0, 1)
    module.position_encoding = SinusoidalPositionEncoding(c.dim, c.position_encoding_length)
    module.input_dropout = nn.Dropout(c.input_dropout)  # seed 003 (seed 000 has none: rate 0)
    module.blocks = nn.ModuleList(
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
    module.final_norm = nn.LayerNorm(c.dim) if c.norm_first else None


def check_inputs(
    ids: Tensor, valid: Tensor | None, max_length: int, pad_id: int | None
) -> tuple[Tensor, Tensor | None]:
    """``ids`` as a batch ``(B, T)`` and its ``valid`` mask (derived from ``pad_id`` when not given);
    too long an input or a mask of another shape is a ``ValueError``."""
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)  # one sample -> a batch of one
    if ids.shape[1] > max_length:
        raise ValueError(f"input of {ids.shape[1]} tokens exceeds max_length={max_length}")
    if valid is None and pad_id is not None:
        valid = padding_mask_from_ids(ids, pad_id)
    if valid is not None and valid.shape != ids.shape:
        raise ValueError(f"valid mask shape {tuple(valid.shape)} does not match ids shape {tuple(ids.shape)}")
    return ids, valid


def run_encoder(
    module: nn.Module, ids: Tensor, valid: Tensor | None, causal: bool = False, extra: Tensor | None = None
) -> Tensor:
    """``ids (B, T)`` -> hidden states ``(B, T, C)`` through the layers ``build_encoder`` made; padding
    keys (False in ``valid``) are hidden, and with ``causal`` every later position too. ``extra (B, T, C)``
    is added to the token embeddings (the classifier's bigram vectors)."""
    t = ids.shape[1]
    x = module.embedding(ids) + module.position_encoding(t)  # (B, T, C) + (T, C)
    if extra is not None:
        x = x + extra  # (B, T, C)
    x = maybe_dropout(module.input_dropout, x)
    mask = attention_mask(valid, causal=causal, query_len=t, key_len=t)  # (B, 1, T or 1, T), (T, T) or None
    for block in module.blocks:
        x = block(x, mask)  # (B, T, C)
    return module.final_norm(x) if module.final_norm is not None else x

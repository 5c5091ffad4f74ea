"""``Encoder``: token ids -> one vector per token, the stack the classifier, the pretraining model and
the translator share.

embedding (× ``scale``) + sinusoidal position encoding -> (input dropout) -> blocks -> [final norm]

The final LayerNorm exists for pre-norm blocks only (their output is not normalised); post-norm
blocks, as in the posts, end in a LayerNorm already, so it is ``nn.Identity`` there.

Shapes: B batch, T tokens, C channels, V vocabulary. Traced steps: ``tokens`` (the ids),
``embedding`` (their rows of the table, scaled), ``position`` (the encoding's rows), ``input`` (the
sum the blocks read), ``blocks.N.*`` and ``final_norm``.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from ..layers import (
    NO_TRACE,
    Block,
    BlockSpec,
    SinusoidalPositionEncoding,
    TokenEmbedding,
    Trace,
    attention_mask,
    maybe_dropout,
)
from ..layers.embedding import input_steps
from ..layers.masks import padding_mask_from_ids
from ..layers.norms import Norm, norm_step


class Encoder(nn.Module):
    """``embedding`` is the token table (a translator may share it with its decoder); ``positions`` the
    length of the sinusoidal table; ``scale`` multiplies the embeddings (the translator's sqrt(C));
    ``position="zero"``: the table holds zeros (post 001's experiment); ``pairs``: a classifier adds
    word-pair vectors to the token rows."""

    def __init__(
        self,
        embedding: TokenEmbedding,
        spec: BlockSpec,
        n_blocks: int,
        *,
        positions: int,
        scale: float = 1.0,
        input_dropout: float = 0.0,
        position: str = "sinusoidal",
        pairs: bool = False,
    ) -> None:
        super().__init__()
        self.embedding = embedding
        self.position_encoding = SinusoidalPositionEncoding(spec.dim, positions)
        self.input_dropout = nn.Dropout(input_dropout)  # post 003 (post 000 has none: rate 0)
        self.blocks = nn.ModuleList(Block(spec) for _ in range(n_blocks))
        self.final_norm = Norm(spec.dim, spec.norm) if spec.norm_first else nn.Identity()
        self.scale = scale
        self.steps = input_steps(scale=scale, position=position, pairs=pairs)
        if spec.norm_first:  # pre-norm blocks leave the stream unnormalised
            self.steps["final_norm"] = norm_step(spec.norm, "x", "the last normalisation, after the blocks")

    def forward(
        self,
        ids: Tensor,
        valid: Tensor | None = None,
        *,
        extra: tuple[Tensor, Tensor] | None = None,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """``ids (B, T)`` -> ``(B, T, C)``. ``valid (B, T)`` (True = a real token) hides padding keys;
        ``extra``: rows ``(B, T)`` of a table ``(N, C)`` added to the token embeddings (the classifier's
        word-pair vectors)."""
        t = ids.shape[1]
        trace = trace.declare(self.steps)
        ids = trace("tokens", ids)
        x = self.embedding(ids)  # (B, T) -> (B, T, C)
        rows = trace("embedding", x * self.scale if self.scale != 1.0 else x, ids, self.embedding.weight)
        position = trace("position", self.position_encoding(t))  # (T, C)
        x = rows + position  # (B, T, C) + (T, C)
        pairs = None
        if extra is not None:
            pairs = trace("pairs", F.embedding(extra[0], extra[1]), *extra)  # (B, T) -> (B, T, C)
            x = x + pairs
        x = maybe_dropout(self.input_dropout, trace("input", x, rows, position, pairs))
        causal = bool(self.blocks) and bool(self.blocks[0].causal)
        mask = attention_mask(valid, causal=causal, query_len=t, key_len=t)  # (B, 1, T or 1, T), (T, T) or None
        for i, block in enumerate(self.blocks):
            x = block(x, mask, trace=trace.at(f"blocks.{i}", block=True))  # (B, T, C)
        if isinstance(self.final_norm, Norm):
            return trace("final_norm", self.final_norm(x), x, *self.final_norm.weights())
        return x


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


def encoder_of(config, causal: bool = False) -> Encoder:  # noqa: ANN001 - an EncoderConfig
    """The encoder a classifier or pretraining config describes (post 000's N(0, 1) embeddings)."""
    return Encoder(
        TokenEmbedding(config.vocab_size, config.dim, init_std=1.0),
        config.block(causal),
        config.n_blocks,
        positions=config.position_encoding_length,
        input_dropout=config.input_dropout,
        pairs=bool(getattr(config, "bigram_buckets", 0)),
    )

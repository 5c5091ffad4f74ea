"""Encoder-decoder translator (seed 001, "Attention is all you need").

Shapes: B batch, S source length, T target length, C channels, V target vocabulary.
``encode`` and ``decode`` are separate so decoding reuses one encoder pass (and, with caches,
one set of encoder keys/values per cross-attention layer).
"""

from __future__ import annotations

import math

from torch import Tensor, nn

from ..config import Seq2SeqConfig
from ..layers import DecoderBlock, EncoderBlock, KVCache, SinusoidalPositionEncoding, TokenEmbedding
from ..layers.blocks import maybe_dropout
from ..layers.masks import attention_mask


class Seq2SeqTransformer(nn.Module):
    def __init__(self, config: Seq2SeqConfig) -> None:
        super().__init__()
        self.config = c = config
        std = c.dim**-0.5  # times the sqrt(C) scale below: unit-size inputs, as in the paper
        self.src_embedding = TokenEmbedding(c.src_vocab_size, c.dim, std)
        self.tgt_embedding = self.src_embedding if c.share_embeddings else TokenEmbedding(c.tgt_vocab_size, c.dim, std)
        self.position_encoding = SinusoidalPositionEncoding(c.dim, c.max_length)
        self.dropout = nn.Dropout(c.dropout)
        common = dict(dropout=c.dropout, activation=c.activation, norm_first=c.norm_first, qkv_bias=c.qkv_bias)
        self.encoder = nn.ModuleList(EncoderBlock(c.n_heads, c.dim, c.dim_hidden, **common)
                                     for _ in range(c.n_encoder_blocks))
        self.decoder = nn.ModuleList(DecoderBlock(c.n_heads, c.dim, c.dim_hidden, **common)
                                     for _ in range(c.n_decoder_blocks))
        self.encoder_norm = nn.LayerNorm(c.dim) if c.norm_first else None
        self.decoder_norm = nn.LayerNorm(c.dim) if c.norm_first else None
        self.head = nn.Linear(c.dim, c.tgt_vocab_size)
        if c.tie_output:
            self.head.weight = self.tgt_embedding.weight  # (V, C) shared
        self.scale = math.sqrt(c.dim)  # embeddings are scaled by sqrt(C) as in the paper

    def _embed(self, table: TokenEmbedding, ids: Tensor, offset: int = 0) -> Tensor:
        x = table(ids) * self.scale + self.position_encoding(ids.shape[1], offset)  # (B, L, C)
        return maybe_dropout(self.dropout, x)

    def encode(self, src: Tensor, src_valid: Tensor | None = None) -> Tensor:
        """``src (B, S)`` -> memory ``(B, S, C)``. ``src_valid`` defaults to ``src != pad_id``."""
        if src_valid is None:
            src_valid = src != self.config.pad_id
        x = self._embed(self.src_embedding, src)
        mask = attention_mask(src_valid)  # (B, 1, 1, S): keys that are real source tokens
        for block in self.encoder:
            x, _ = block(x, mask)
        return self.encoder_norm(x) if self.encoder_norm is not None else x

    def new_cache(self, batch: int, capacity: int | None = None) -> tuple[list[KVCache], list[KVCache]]:
        """Self-attention caches and cross-attention (encoder key/value) caches, one per decoder block."""
        c = self.config
        p = self.head.weight
        cap = c.max_length if capacity is None else capacity
        mk = lambda n: [KVCache(batch, c.n_heads, n, c.dim // c.n_heads, dtype=p.dtype, device=p.device)  # noqa: E731
                        for _ in self.decoder]
        return mk(cap), mk(c.max_length)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_valid: Tensor,
        tgt_valid: Tensor | None = None,
        *,
        cache: tuple[list[KVCache], list[KVCache]] | None = None,
        last_only: bool = False,
        return_scores: bool = False,
    ):
        """``tgt (B, T)`` (shifted right, starting with BOS) -> logits ``(B, T, V)``.

        Self-attention is causal and ignores target padding keys; cross-attention ignores source
        padding. With ``cache`` the ``tgt`` ids are the new tokens after those cached.
        """
        offset = cache[0][0].length if cache else 0
        x = self._embed(self.tgt_embedding, tgt, offset)  # (B, T, C)
        if tgt_valid is not None and cache is None:
            self_mask = attention_mask(tgt_valid, causal=True)  # (B, 1, T, T)
            is_causal = False
        else:
            self_mask, is_causal = None, True
        memory_mask = attention_mask(src_valid)  # (B, 1, 1, S)
        all_scores = []
        for i, block in enumerate(self.decoder):
            x, scores = block(x, memory, self_mask, memory_mask, is_causal=is_causal, return_scores=return_scores,
                              cache=None if cache is None else cache[0][i],
                              memory_cache=None if cache is None else cache[1][i])
            all_scores.append(scores)
        if last_only:
            x = x[:, -1:, :]
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        logits = self.head(x)  # (B, T, C) @ (C, V) -> (B, T, V)
        return (logits, all_scores) if return_scores else logits

    def forward(self, src: Tensor, tgt: Tensor, src_valid: Tensor | None = None,
                tgt_valid: Tensor | None = None) -> Tensor:
        if src_valid is None:
            src_valid = src != self.config.pad_id
        if tgt_valid is None:
            tgt_valid = tgt != self.config.pad_id
        memory = self.encode(src, src_valid)
        return self.decode(tgt, memory, src_valid, tgt_valid)

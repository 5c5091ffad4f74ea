"""Encoder-decoder translator (seed 001, "Attention is all you need").

Shapes: B batch, S source length, T target length, C channels, V target vocabulary, H heads, D head size.

* ``encode(src) -> memory``: the source through the encoder blocks, once per sentence.
* ``decode(tgt, memory, src_valid)``: every target position at once (training, teacher forcing).
* ``start_decoding(memory, src_valid)`` then ``decode_step(tokens, cache)``: one new token per step,
  with a ``DecoderCache`` holding each block's self-attention keys/values (appended every step)
  and its encoder keys/values (computed once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch import Tensor, nn

from ..config import Seq2SeqConfig
from ..layers import DecoderBlock, EncoderBlock, KVCache, SinusoidalPositionEncoding, TokenEmbedding, maybe_dropout
from ..layers.masks import attention_mask, padding_mask_from_ids


@dataclass
class DecoderCache:
    """What incremental decoding keeps between steps, one entry per decoder block."""

    self_attention: list[KVCache]  # the target prefix's keys/values, one position more per step
    memory_kv: list[tuple[Tensor, Tensor]]  # the encoder output's keys/values (B, H, S, D), fixed
    memory_mask: Tensor  # (B, 1, 1, S): real source tokens

    @property
    def length(self) -> int:
        return self.self_attention[0].length

    def reorder(self, index: Tensor, memory: bool = True) -> None:
        """Keep batch rows ``index`` (beam search follows the surviving hypotheses). ``memory=False``
        keeps the encoder keys/values in place: right when rows move only among beams of one source."""
        for c in self.self_attention:
            c.reorder(index)
        if memory:
            self.memory_kv = [(k[index], v[index]) for k, v in self.memory_kv]
            self.memory_mask = self.memory_mask[index]


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
        self.encoder = nn.ModuleList(
            EncoderBlock(c.n_heads, c.dim, c.dim_hidden, **common) for _ in range(c.n_encoder_blocks)
        )
        self.decoder = nn.ModuleList(
            DecoderBlock(c.n_heads, c.dim, c.dim_hidden, **common) for _ in range(c.n_decoder_blocks)
        )
        self.encoder_norm = nn.LayerNorm(c.dim) if c.norm_first else None
        self.decoder_norm = nn.LayerNorm(c.dim) if c.norm_first else None
        self.head = nn.Linear(c.dim, c.tgt_vocab_size)
        if c.tie_embeddings:
            self.head.weight = self.tgt_embedding.weight  # (V, C) shared
        self.scale = math.sqrt(c.dim)  # embeddings are scaled by sqrt(C) as in the paper

    def _embed(self, table: TokenEmbedding, ids: Tensor, offset: int = 0) -> Tensor:
        x = table(ids) * self.scale + self.position_encoding(ids.shape[1], offset)  # (B, L, C)
        return maybe_dropout(self.dropout, x)

    def encode(self, src: Tensor, src_valid: Tensor | None = None) -> Tensor:
        """``src (B, S)`` -> memory ``(B, S, C)``. ``src_valid`` defaults to ``src != pad_id``."""
        if src_valid is None:
            src_valid = padding_mask_from_ids(src, self.config.pad_id)
        x = self._embed(self.src_embedding, src)
        mask = attention_mask(src_valid)  # (B, 1, 1, S): keys that are real source tokens
        for block in self.encoder:
            x = block(x, mask)
        return self.encoder_norm(x) if self.encoder_norm is not None else x

    def _logits(self, x: Tensor, last_only: bool) -> Tensor:
        if last_only:
            x = x[:, -1:, :]  # (B, 1, C)
        if self.decoder_norm is not None:
            x = self.decoder_norm(x)
        return self.head(x)  # (B, T, C) @ (C, V) -> (B, T, V)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_valid: Tensor,
        tgt_valid: Tensor | None = None,
        *,
        last_only: bool = False,
    ) -> Tensor:
        """``tgt (B, T)`` (shifted right, starting with BOS) -> logits ``(B, T, V)``.

        Self-attention is causal and ignores target padding keys; cross-attention ignores source padding.
        """
        x = self._embed(self.tgt_embedding, tgt)  # (B, T, C)
        self_mask = attention_mask(tgt_valid)  # (B, 1, 1, T) or None; the blocks add the look-ahead part
        memory_mask = attention_mask(src_valid)  # (B, 1, 1, S)
        for block in self.decoder:
            x = block(x, memory, self_mask, memory_mask)
        return self._logits(x, last_only)

    def start_decoding(self, memory: Tensor, src_valid: Tensor, capacity: int | None = None) -> DecoderCache:
        """A ``DecoderCache`` for ``memory (B, S, C)``: empty self-attention caches of ``capacity``
        positions (default ``max_length``) and each block's encoder keys/values, computed now."""
        c = self.config
        p = self.head.weight
        cap = c.max_length if capacity is None else capacity
        caches = [
            KVCache(memory.shape[0], c.n_heads, cap, c.dim // c.n_heads, dtype=p.dtype, device=p.device)
            for _ in self.decoder
        ]
        memory_kv = [block.cross_attention.memory_keys_values(memory) for block in self.decoder]
        return DecoderCache(caches, memory_kv, attention_mask(src_valid))

    def decode_step(self, tgt: Tensor, cache: DecoderCache) -> Tensor:
        """The new target ids ``tgt (B, T)`` after those in ``cache`` -> logits of the last ``(B, V)``."""
        x = self._embed(self.tgt_embedding, tgt, cache.length)  # positions continue from the cache
        for block, self_cache, memory_kv in zip(self.decoder, cache.self_attention, cache.memory_kv):
            x = block(x, None, None, cache.memory_mask, cache=self_cache, memory_kv=memory_kv)
        return self._logits(x, last_only=True)[:, -1]

    def forward(
        self, src: Tensor, tgt: Tensor, src_valid: Tensor | None = None, tgt_valid: Tensor | None = None
    ) -> Tensor:
        """Teacher-forced logits ``(B, T, V)`` of ``tgt`` given ``src``."""
        if src_valid is None:
            src_valid = padding_mask_from_ids(src, self.config.pad_id)
        if tgt_valid is None:
            tgt_valid = padding_mask_from_ids(tgt, self.config.pad_id)
        memory = self.encode(src, src_valid)
        return self.decode(tgt, memory, src_valid, tgt_valid)

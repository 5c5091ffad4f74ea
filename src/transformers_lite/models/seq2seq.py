"""Encoder-decoder translator (post 001, "Attention is all you need").

Shapes: B batch, S source length, T target length, C channels, V target vocabulary, H heads, D head size.

* ``encode(src) -> memory``: the source through the ``Encoder``, once per sentence.
* ``decode(tgt, memory, src_valid)``: every target position at once (training, teacher forcing).
* ``start_decoding(memory, src_valid)`` then ``decode_step(tokens, cache)``: one new token per step,
  with a ``DecoderCache`` holding the decoder blocks' self-attention keys/values (a ``KVCache``,
  one position more per step) and their encoder keys/values (computed once).

Traced steps: ``encoder.*`` (see ``Encoder``), then ``decoder.embedding``, ``decoder.position``,
``decoder.input``, ``decoder.blocks.N.*`` (self-attention, cross-attention, feed-forward),
``decoder.final_norm`` and ``logits``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

from torch import Tensor, nn

from ..config import Seq2SeqConfig
from ..layers import NO_TRACE, DecoderBlock, KVCache, TokenEmbedding, Trace, attention_mask, maybe_dropout
from ..layers.embedding import input_steps
from ..layers.masks import padding_mask_from_ids
from ..layers.norms import Norm, norm_of, norm_step
from ..layers.steps import Step, dense
from .encoder import Encoder


def decoder_steps(c: Seq2SeqConfig, scale: float) -> tuple[dict[str, Step], dict[str, Step]]:
    """The decoder's steps outside its blocks, and the model's output layer, as ``c`` configures them."""
    steps = input_steps(scale=scale, position="zero" if c.position == "none" else "sinusoidal")
    spec = c.block().norm
    if c.norm_first:
        steps["final_norm"] = norm_step(spec, "x", "the decoder's last normalisation, before the output layer")
    h = norm_of(spec, "x") if c.norm_first else "x"
    if c.tie_embeddings:  # post 001's output layer is its own Dense: a tied one is not in the posts
        ours, _, words = dense(h, "E_target", "b_out")
        logits = Step(
            "tied_output",
            "TV",
            f"z = {ours}: the target token table is the output layer",
            None,
            "one score per target vocabulary entry",
            computes=words.replace("a Dense", "a Dense whose weight is the target token table E_target itself", 1),
        )
    else:
        ours, post, words = dense(h, "W_out", "b_out", post_x="x")
        logits = Step(
            "projection", "TV", f"z = {ours}", f"z = {post}", "one score per target vocabulary entry", computes=words
        )
    return steps, {"logits": logits}


@dataclass
class DecoderCache:
    """What incremental decoding keeps between steps."""

    self_attention: KVCache  # the target prefix's keys/values of every decoder block, one position more per step
    memory_kv: list[tuple[Tensor, Tensor]]  # each block's encoder keys/values (B, H, S, D), fixed
    memory_mask: Tensor | None  # (B, 1, 1, S): real source tokens (None: no padding)

    @property
    def length(self) -> int:
        return self.self_attention.length

    def reorder(self, index: Tensor, memory: bool = True) -> None:
        """Keep batch rows ``index`` (beam search follows the surviving hypotheses). ``memory=False``
        keeps the encoder keys/values in place: right when rows move only among beams of one source."""
        self.self_attention.reorder(index)
        if memory:
            self.memory_kv = [(k[index], v[index]) for k, v in self.memory_kv]
            self.memory_mask = None if self.memory_mask is None else self.memory_mask[index]


class TransformerSeq2Seq(nn.Module):
    def __init__(self, config: Seq2SeqConfig) -> None:
        super().__init__()
        self.config = c = config
        std = c.dim**-0.5  # times the sqrt(C) scale below: unit-size inputs, as in the paper
        source = TokenEmbedding(c.src_vocab_size, c.dim, std)
        target = source if c.share_embeddings else TokenEmbedding(c.tgt_vocab_size, c.dim, std)
        self.scale = math.sqrt(c.dim)  # embeddings are scaled by sqrt(C) as in the paper
        spec = c.block()
        self.encoder = Encoder(
            source,
            spec,
            c.n_encoder_blocks,
            positions=c.max_length,
            scale=self.scale,
            input_dropout=c.dropout,
            position="zero" if c.position == "none" else "sinusoidal",
        )
        if c.position == "none":  # post 001's question: the encoding's rows all zero, for encoder and decoder
            self.encoder.position_encoding.weight.zero_()
        self.tgt_embedding = target
        self.dropout = nn.Dropout(c.dropout)
        self.decoder = nn.ModuleList(DecoderBlock(spec) for _ in range(c.n_decoder_blocks))
        self.decoder_norm = Norm(c.dim, spec.norm) if c.norm_first else nn.Identity()
        self.head = nn.Linear(c.dim, c.tgt_vocab_size)
        if c.tie_embeddings:
            self.head.weight = self.tgt_embedding.weight  # (V, C) shared
        self.decoder_steps, self.steps = decoder_steps(c, self.scale)

    def encode(self, src: Tensor, src_valid: Tensor | None = None, *, trace: Trace = NO_TRACE) -> Tensor:
        """``src (B, S)`` -> memory ``(B, S, C)``. ``src_valid`` defaults to ``src != pad_id``."""
        if src_valid is None:
            src_valid = padding_mask_from_ids(src, self.config.pad_id)
        return self.encoder(src, src_valid, trace=trace.at("encoder", side="source"))

    def _decode(
        self,
        tgt: Tensor,
        memory_kv: list[tuple[Tensor, Tensor]],
        self_mask: Tensor | None,
        memory_mask: Tensor | None,
        cache: KVCache | None,
        last_only: bool,
        trace: Trace,
        memory: Tensor | None = None,
    ) -> Tensor:
        offset = 0 if cache is None else cache.length
        active = trace.active  # decoding runs this at every token: it calls the trace only when one records
        dec = trace.at("decoder", self.decoder_steps, side="target")
        if active:
            tgt = dec("tokens", tgt)
        table = self.tgt_embedding.weight
        rows = self.tgt_embedding(tgt) * self.scale  # (B, T, C)
        position = self.encoder.position_encoding(tgt.shape[1], offset)  # (T, C)
        if active:
            rows, position = dec("embedding", rows, tgt, table), dec("position", position)
        x = rows + position  # (B, T, C) + (T, C)
        x = maybe_dropout(self.dropout, dec("input", x, rows, position) if active else x)
        for i, (block, kv) in enumerate(zip(self.decoder, memory_kv)):
            at = dec.at(f"blocks.{i}", block=True)
            x = block(x, kv, self_mask, memory_mask, cache=cache, layer=i, trace=at, memory=memory)
        if cache is not None:
            cache.advance(tgt.shape[1])
        if last_only:
            x = x[:, -1:, :]  # (B, 1, C)
        if isinstance(self.decoder_norm, Norm):
            normed = self.decoder_norm(x)
            x = dec("final_norm", normed, x, *self.decoder_norm.weights()) if active else normed
        head = self.head
        logits = head(x)  # (B, T, C) @ (C, V) -> (B, T, V)
        return trace.declare(self.steps)("logits", logits, x, head.weight, head.bias) if active else logits

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_valid: Tensor,
        tgt_valid: Tensor | None = None,
        *,
        last_only: bool = False,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """``tgt (B, T)`` (shifted right, starting with BOS) -> logits ``(B, T, V)``.

        Self-attention is causal and ignores target padding keys; cross-attention ignores source padding.
        """
        memory_kv = [
            block.cross_attention.memory_keys_values(memory) for block in cast("list[DecoderBlock]", self.decoder)
        ]
        self_mask = attention_mask(tgt_valid)  # (B, 1, 1, T) or None; the blocks add the look-ahead part
        return self._decode(tgt, memory_kv, self_mask, attention_mask(src_valid), None, last_only, trace, memory)

    def start_decoding(self, memory: Tensor, src_valid: Tensor, capacity: int | None = None) -> DecoderCache:
        """A ``DecoderCache`` for ``memory (B, S, C)``: an empty self-attention cache of ``capacity``
        positions (default ``max_length``) and each block's encoder keys/values, computed now."""
        c, p = self.config, self.head.weight
        cap = c.max_length if capacity is None else capacity
        heads = c.block().key_value_heads  # self-attention's key/value heads: what the cache holds
        cache = KVCache(
            c.n_decoder_blocks, memory.shape[0], heads, cap, c.dim // c.n_heads, dtype=p.dtype, device=p.device
        )
        memory_kv = [
            block.cross_attention.memory_keys_values(memory) for block in cast("list[DecoderBlock]", self.decoder)
        ]
        return DecoderCache(cache, memory_kv, attention_mask(src_valid))

    def decode_step(self, tgt: Tensor, cache: DecoderCache) -> Tensor:
        """The new target ids ``tgt (B, T)`` after those in ``cache`` -> logits of the last ``(B, V)``."""
        logits = self._decode(tgt, cache.memory_kv, None, cache.memory_mask, cache.self_attention, True, NO_TRACE)
        return logits[:, -1]

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_valid: Tensor | None = None,
        tgt_valid: Tensor | None = None,
        *,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """Teacher-forced logits ``(B, T, V)`` of ``tgt`` given ``src``."""
        if src_valid is None:
            src_valid = padding_mask_from_ids(src, self.config.pad_id)
        if tgt_valid is None:
            tgt_valid = padding_mask_from_ids(tgt, self.config.pad_id)
        memory = self.encode(src, src_valid, trace=trace)
        return self.decode(tgt, memory, src_valid, tgt_valid, trace=trace)

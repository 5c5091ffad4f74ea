"""Character GPT (post 004): token + position embeddings -> dropout -> causal blocks -> Dense to V.

Shapes: B batch, T time (at most ``max_length``, the context), C channels, V vocabulary.

One forward serves training, inspection and decoding: with ``cache`` (a ``KVCache`` from
``new_cache``) the ids are the new tokens after those already cached, so sampling feeds one token per
step; with ``trace`` every step of the posts' equations is handed back (see ``layers.trace``).
Traced steps: ``tokens``, ``embedding``, ``position``, (``pairs``), ``input``, ``blocks.N.*``,
``final_norm``, (``uncapped``), ``logits``.

The speedrun's options (off by default): ``zero_init`` (each block starts as the identity on its residual
stream, pre-norm, and the head predicts the uniform distribution), ``logit_cap`` (``cap · tanh(z / cap)``),
``value_residual`` (the first block's values mixed into every later block's), ``bigram_embedding`` (a
row per pair of tokens added to the input) and ``embedding_shortcut`` (the first block's input mixed into
every later block's).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..config import GeneratorConfig
from ..layers import (
    NO_TRACE,
    Block,
    KVCache,
    LearnedPositionEmbedding,
    RotaryEmbedding,
    TokenEmbedding,
    Trace,
    maybe_dropout,
)
from ..layers.blocks import BlockWeights
from ..layers.embedding import BigramEmbedding, check_ids, input_steps
from ..layers.norms import Norm, NormWeights, norm_of, norm_step
from ..layers.steps import Step, dense


class GeneratorWeights(NamedTuple):
    """Every parameter the forward reads (``TransformerGenerator.weights``)."""

    table: Tensor  # E (V, C)
    positions: Tensor | None  # PE (L, C), or None with rotary positions
    blocks: list[BlockWeights]
    final_norm: NormWeights | None
    head: Tensor  # W_out (V, C): E itself when tied
    head_bias: Tensor | None
    pairs: Tensor | None = None  # B ((V + 1) V, C): the bigram table, or None


def generator_steps(c: GeneratorConfig) -> dict[str, Step]:
    """The steps outside the blocks, as ``c`` configures them."""
    steps = input_steps(position=None if c.position == "rope" else "learned", pairs=c.bigram_embedding)
    if c.bigram_embedding:
        steps["pairs"] = Step(
            "embedding",
            "TC",
            f"B[p · V + id]: row (previous id p, id) of an exact table ({c.vocab_size + 1} × {c.vocab_size} rows; "
            "the window's first token reads p = V, the start)",
            None,
            "a learned vector per pair of tokens (what follows what), added",
            computes="rows of a table, one per pair of tokens (the previous and this one)",
        )
    spec = c.block().norm
    if c.final_norm:
        steps["final_norm"] = norm_step(spec, "x", "the last normalisation before the output layer")
    h = norm_of(spec, "x") if c.final_norm else "x"
    bias = "b_out" if c.head_bias else None
    if c.tie_embeddings:  # post 004's output layer is its own Dense: a tied one is not in the posts
        ours, _, words = dense(h, "E", bias)
        steps["logits"] = Step(
            "tied_output",
            "TV",
            f"z = {ours}: the token table E is the output layer",
            None,
            "one score per vocabulary entry: how close the stream is to each token's own embedding",
            computes=words.replace("a Dense", "a Dense whose weight is the token table E itself", 1),
        )
    else:
        ours, post, words = dense(h, "W_out", bias, post_x="x")
        steps["logits"] = Step(
            "projection", "TV", f"z = {ours}", f"z = {post}", "one score per vocabulary entry", computes=words
        )
    if c.logit_cap:
        steps["uncapped"] = steps.pop("logits")
        cap = f"{c.logit_cap:g}"
        steps["logits"] = Step(
            "soft_cap",
            "TV",
            f"z ← c · tanh(z / c), c = {cap}: every score squashed into (−{cap}, {cap})",
            None,
            "the scores soft-capped: near z for small scores, never beyond ±c, so no logit can run away",
            factor=c.logit_cap,
            computes=f"squashed into (−{cap}, {cap}): c · tanh(z / c) with c = {cap}",
        )
    return steps


class TransformerGenerator(nn.Module):
    def __init__(self, config: GeneratorConfig) -> None:
        super().__init__()
        self.config = c = config
        self.embedding = TokenEmbedding(c.vocab_size, c.dim)
        self.pairs = BigramEmbedding(None, c.dim, c.vocab_size) if c.bigram_embedding else None
        rope = RotaryEmbedding(c.dim // c.n_heads, c.max_length) if c.position == "rope" else None
        self.position_embedding = LearnedPositionEmbedding(c.max_length, c.dim) if rope is None else None
        self.dropout = nn.Dropout(c.dropout)
        spec = c.block(causal=c.causal)
        # value residual, embedding shortcut: the first block's values are V₁ and its input x₀, so it mixes in none
        first = replace(spec, value_residual=False, shortcut=False)
        self.blocks = nn.ModuleList(Block(first if i == 0 else spec, rope) for i in range(c.n_blocks))
        self.final_norm = Norm(c.dim, spec.norm) if c.final_norm else nn.Identity()
        self.norm_spec = spec.norm  # read at every token: kept here, not looked up through the module
        self.head = nn.Linear(c.dim, c.vocab_size, bias=c.head_bias)
        if c.tie_embeddings:
            self.head.weight = self.embedding.weight  # (V, C) shared by input and output
        if c.init == "gpt2":
            self._init_gpt2()
        if c.zero_init:
            self._init_zero()
        self.steps = generator_steps(c)

    @torch.no_grad()
    def _init_gpt2(self) -> None:
        """GPT-2's initialisation: every Dense and embedding weight ~ N(0, 0.02), biases 0; the Dense
        that closes each residual branch (attention ``out``, the feed-forward's ``closing()`` Dense) ~ N(0, 0.02 /
        sqrt(2 n_blocks)), so the residual stream's variance does not grow with depth."""
        std = 0.02
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, 0.0, std)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        nn.init.normal_(self.embedding.weight, 0.0, std)
        if self.position_embedding is not None:
            nn.init.normal_(self.position_embedding.weight, 0.0, std)
        for block in cast("list[Block]", self.blocks):
            for closing in (block.attention.out, block.feed_forward.closing()):
                nn.init.normal_(closing.weight, 0.0, std / (2 * len(self.blocks)) ** 0.5)

    @torch.no_grad()
    def _init_zero(self) -> None:
        """The Dense that closes each residual branch (attention ``out``, the feed-forward's ``closing()``) and the
        head, weights and biases, start at zero (modded-nanogpt): every branch adds nothing at step 0, so
        a pre-norm block is the identity on its residual stream and the model predicts the uniform
        distribution. A tied head is the token table and keeps its values. Training grows the model from
        the output back: a Dense's ``∂W = Σ ∂yᵀ x`` does not read ``W``, so the zero head gets a gradient at
        the first step, each closing Dense once the head has moved, and the layers before them after that
        (a zero ``W`` passes ``∂x = ∂y W = 0`` back)."""
        closing = [m for b in cast("list[Block]", self.blocks) for m in (b.attention.out, b.feed_forward.closing())]
        if not self.config.tie_embeddings:
            closing.append(self.head)
        for dense_layer in closing:
            nn.init.zeros_(dense_layer.weight)
            if dense_layer.bias is not None:
                nn.init.zeros_(dense_layer.bias)

    def new_cache(self, batch: int, capacity: int | None = None) -> KVCache:
        """A preallocated KV cache for every block (``capacity`` positions, default the context)."""
        c, p = self.config, self.head.weight
        cap = c.max_length if capacity is None else capacity
        heads = c.block().key_value_heads  # self-attention's key/value heads: what the cache holds
        return KVCache(c.n_blocks, batch, heads, cap, c.dim // c.n_heads, dtype=p.dtype, device=p.device)

    def weights(self, detach: bool = False) -> GeneratorWeights:
        """Every parameter the forward reads: token table, position table, each block's, final norm, head
        (detached: plain tensors, read once per generation by the decoder)."""
        pos, norm = self.position_embedding, self.final_norm
        w = GeneratorWeights(
            self.embedding.weight,
            None if pos is None else pos.weight,
            [block.weights(detach) for block in cast("list[Block]", self.blocks)],
            norm.weights() if isinstance(norm, Norm) else None,
            self.head.weight,
            self.head.bias,
            None if self.pairs is None else self.pairs.weight,
        )
        if not detach:
            return w
        gain = w.final_norm
        final = (
            None
            if gain is None
            else NormWeights(gain.weight.detach(), None if gain.bias is None else gain.bias.detach())
        )
        plain = (None if t is None else t.detach() for t in (w.table, w.positions, w.head, w.head_bias, w.pairs))
        table, positions, head, head_bias, pairs = plain
        return GeneratorWeights(table, positions, w.blocks, final, head, head_bias, pairs)  # type: ignore[arg-type]

    def forward(
        self, ids: Tensor, *, cache: KVCache | None = None, last_only: bool = False, trace: Trace = NO_TRACE
    ) -> Tensor:
        """``ids (B, T)`` -> logits ``(B, T, V)`` (``(B, 1, V)`` with ``last_only``).

        With ``cache`` the ids are the *new* tokens following those already cached; their positions
        continue from the cache length.
        """
        return self.run(self.weights(), ids, cache=cache, last_only=last_only, trace=trace)

    def run(
        self,
        w: GeneratorWeights,
        ids: Tensor,
        *,
        cache: KVCache | None = None,
        last_only: bool = False,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """The forward's equations on the weights ``w`` (``weights()``)."""
        if ids.dim() == 1:
            ids = ids.unsqueeze(0)
        table, positions, blocks, final_norm, head, head_bias, pair_table = w
        offset = 0 if cache is None else cache.length
        t = ids.shape[1]
        if offset + t > self.config.max_length:
            raise ValueError(
                f"sequence of {offset + t} tokens exceeds the context length {self.config.max_length}; "
                "crop to the last max_length tokens"
            )
        active = trace.active  # decoding runs this at every token: it calls the trace only when one records
        if active:
            trace = trace.declare(self.steps)
            ids = trace("tokens", ids)
        if cache is None or t > 1:  # ids fed one at a time to a cache were sampled from this model
            check_ids(ids, table.shape[0])
        rows = torch.embedding(table, ids)  # (B, T) -> (B, T, C): the rows of the ids
        position = None if positions is None else positions[offset : offset + t]  # (T, C)
        if active:
            rows = trace("embedding", rows, ids, table)
            position = None if position is None else trace("position", position, positions)
        x = rows if position is None else rows + position  # (B, T, C) + (T, C)
        pairs = None
        if pair_table is not None and self.pairs is not None:
            before = None if cache is None or cache.length == 0 else cache.last_ids  # (B, 1): decoding goes on
            index = self.pairs.rows(ids, before)  # (B, T): previous · V + id
            pairs = torch.embedding(pair_table, index)  # (B, T) -> (B, T, C)
            x = x + (trace("pairs", pairs, index, pair_table) if active else pairs)
        x = maybe_dropout(self.dropout, trace("input", x, rows, position, pairs) if active else x)
        values: list[Tensor] | None = [] if self.config.value_residual else None  # the first block's V, shared
        x0 = x if self.config.embedding_shortcut else None  # (B, T, C): the first block's input
        for i, (block, bw) in enumerate(zip(cast("list[Block]", self.blocks), blocks)):
            at = trace.at(f"blocks.{i}", block=True) if active else trace
            x = block.run(bw, x, cache=cache, layer=i, values=values, x0=x0, trace=at)
        if cache is not None:
            cache.advance(t)
            cache.last_ids = ids[:, -1:]
        if last_only:
            x = x[:, -1:, :]  # (B, 1, C): generation needs only the next-token logits
        if final_norm is not None:
            spec = self.norm_spec
            normed = spec.apply(x, final_norm, spec.eps)
            x = trace("final_norm", normed, x, *final_norm) if active else normed
        logits = F.linear(x, head, head_bias)  # (B, T, C) @ (C, V) -> (B, T, V)
        cap = self.config.logit_cap
        if not cap:
            return trace("logits", logits, x, head, head_bias) if active else logits
        logits = trace("uncapped", logits, x, head, head_bias) if active else logits
        capped = cap * torch.tanh(logits / cap)  # (B, T, V), each in (−cap, cap)
        return trace("logits", capped, logits) if active else capped

    @torch.no_grad()
    def embeddings(self) -> dict[str, Tensor]:
        """Token, position and output-head vectors, for inspection plots."""
        out = {"token": self.embedding.weight.detach(), "head": self.head.weight.detach()}
        if self.position_embedding is not None:
            out["position"] = self.position_embedding.weight.detach()
        return out

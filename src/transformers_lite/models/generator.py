"""Character GPT (post 004): token + position embeddings -> dropout -> causal blocks -> Dense to V.

Shapes: B batch, T time (at most ``max_length``, the context), C channels, V vocabulary.

One forward serves training, inspection and decoding: with ``cache`` (a ``KVCache`` from
``new_cache``) the ids are the new tokens after those already cached, so sampling feeds one token per
step; with ``trace`` every step of the posts' equations is handed back (see ``layers.trace``).
Traced steps: ``tokens``, ``embedding``, ``position``, ``input``, ``blocks.N.*``, ``final_norm``,
``logits``.
"""

from __future__ import annotations

from typing import cast

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
from ..layers.embedding import check_ids
from ..layers.residual import layer_norm


class TransformerGenerator(nn.Module):
    def __init__(self, config: GeneratorConfig) -> None:
        super().__init__()
        self.config = c = config
        self.embedding = TokenEmbedding(c.vocab_size, c.dim)
        rope = RotaryEmbedding(c.dim // c.n_heads, c.max_length) if c.position == "rope" else None
        self.position_embedding = LearnedPositionEmbedding(c.max_length, c.dim) if rope is None else None
        self.dropout = nn.Dropout(c.dropout)
        spec = c.block(causal=c.causal)
        self.blocks = nn.ModuleList(Block(spec, rope) for _ in range(c.n_blocks))
        self.final_norm = nn.LayerNorm(c.dim, eps=c.norm_eps) if c.final_norm else nn.Identity()
        self.head = nn.Linear(c.dim, c.vocab_size, bias=c.head_bias)
        if c.tie_embeddings:
            self.head.weight = self.embedding.weight  # (V, C) shared by input and output
        if c.init == "gpt2":
            self._init_gpt2()

    @torch.no_grad()
    def _init_gpt2(self) -> None:
        """GPT-2's initialisation: every Dense and embedding weight ~ N(0, 0.02), biases 0; the Dense
        that closes each residual branch (attention ``out``, feed-forward ``dense2``) ~ N(0, 0.02 /
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
            for closing in (block.attention.out, block.feed_forward.dense2):
                nn.init.normal_(closing.weight, 0.0, std / (2 * len(self.blocks)) ** 0.5)

    def new_cache(self, batch: int, capacity: int | None = None) -> KVCache:
        """A preallocated KV cache for every block (``capacity`` positions, default the context)."""
        c, p = self.config, self.head.weight
        cap = c.max_length if capacity is None else capacity
        return KVCache(c.n_blocks, batch, c.n_heads, cap, c.dim // c.n_heads, dtype=p.dtype, device=p.device)

    def weights(self, detach: bool = False) -> tuple:
        """Every parameter the forward reads: token table, position table, each block's, final norm, head
        (detached: plain tensors, read once per generation by the decoder)."""
        pos = self.position_embedding
        norm = self.final_norm
        w = (
            self.embedding.weight,
            None if pos is None else pos.weight,
            [block.weights(detach) for block in cast("list[Block]", self.blocks)],
            (norm.weight, norm.bias, norm.eps) if self.config.final_norm else None,
            self.head.weight,
            self.head.bias,
        )
        return w if not detach else tuple(t.detach() if isinstance(t, Tensor) else t for t in w)

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
        w: tuple,
        ids: Tensor,
        *,
        cache: KVCache | None = None,
        last_only: bool = False,
        trace: Trace = NO_TRACE,
    ) -> Tensor:
        """The forward's equations on the weights ``w`` (``weights()``)."""
        if ids.dim() == 1:
            ids = ids.unsqueeze(0)
        table, positions, blocks, final_norm, head, head_bias = w
        offset = 0 if cache is None else cache.length
        t = ids.shape[1]
        if offset + t > self.config.max_length:
            raise ValueError(
                f"sequence of {offset + t} tokens exceeds the context length {self.config.max_length}; "
                "crop to the last max_length tokens"
            )
        trace("tokens", ids)
        if cache is None or t > 1:  # ids fed one at a time to a cache were sampled from this model
            check_ids(ids, table.shape[0])
        x = trace("embedding", torch.embedding(table, ids))  # (B, T) -> (B, T, C): the rows of the ids
        if positions is not None:
            x = x + trace("position", positions[offset : offset + t])  # (B, T, C) + (T, C)
        x = maybe_dropout(self.dropout, trace("input", x))
        for i, (block, bw) in enumerate(zip(cast("list[Block]", self.blocks), blocks)):
            x = block.run(bw, x, cache=cache, layer=i, trace=trace.at(f"blocks.{i}") if trace.active else trace)
        if cache is not None:
            cache.advance(t)
        if last_only:
            x = x[:, -1:, :]  # (B, 1, C): generation needs only the next-token logits
        if final_norm is not None:
            x = trace("final_norm", layer_norm(x, final_norm))
        return trace("logits", F.linear(x, head, head_bias))  # (B, T, C) @ (C, V) -> (B, T, V)

    @torch.no_grad()
    def embeddings(self) -> dict[str, Tensor]:
        """Token, position and output-head vectors, for inspection plots."""
        out = {"token": self.embedding.weight.detach(), "head": self.head.weight.detach()}
        if self.position_embedding is not None:
            out["position"] = self.position_embedding.weight.detach()
        return out

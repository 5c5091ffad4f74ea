"""Character GPT (seed 004): token + position embeddings -> dropout -> causal blocks -> Dense to V.

Shapes: B batch, T time (at most ``max_length``, the context), C channels, V vocabulary.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ..config import GeneratorConfig
from ..layers import CausalBlock, KVCache, LearnedPositionEmbedding, RotaryEmbedding, TokenEmbedding, maybe_dropout


class TransformerGenerator(nn.Module):
    def __init__(self, config: GeneratorConfig) -> None:
        super().__init__()
        self.config = c = config
        self.embedding = TokenEmbedding(c.vocab_size, c.dim)
        rope = RotaryEmbedding(c.dim // c.n_heads, c.max_length) if c.position == "rope" else None
        self.position_embedding = LearnedPositionEmbedding(c.max_length, c.dim) if rope is None else None
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            CausalBlock(
                c.n_heads,
                c.dim,
                c.dim_hidden,
                dropout=c.dropout,
                activation=c.activation,
                norm_first=c.norm_first,
                qkv_bias=c.qkv_bias,
                rope=rope,
                eps=c.norm_eps,
            )
            for _ in range(c.n_blocks)
        )
        for block in self.blocks:
            block.causal = c.causal
        self.final_norm = nn.LayerNorm(c.dim, eps=c.norm_eps) if c.final_norm else None
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
        for block in self.blocks:
            for closing in (block.attention.out, block.feed_forward.dense2):
                nn.init.normal_(closing.weight, 0.0, std / (2 * len(self.blocks)) ** 0.5)

    def new_cache(self, batch: int, capacity: int | None = None) -> list[KVCache]:
        """One preallocated KV cache per block (``capacity`` positions, default the context)."""
        c = self.config
        p = self.head.weight
        cap = c.max_length if capacity is None else capacity
        return [KVCache(batch, c.n_heads, cap, c.dim // c.n_heads, dtype=p.dtype, device=p.device) for _ in self.blocks]

    def forward(self, ids: Tensor, *, cache: list[KVCache] | None = None, last_only: bool = False) -> Tensor:
        """``ids (B, T)`` -> logits ``(B, T, V)`` (``(B, 1, V)`` with ``last_only``).

        With ``cache`` the ids are the *new* tokens following those already cached; their positions
        continue from the cache length.
        """
        if ids.dim() == 1:
            ids = ids.unsqueeze(0)
        offset = cache[0].length if cache else 0
        t = ids.shape[1]
        if offset + t > self.config.max_length:
            raise ValueError(
                f"sequence of {offset + t} tokens exceeds the context length {self.config.max_length}; "
                "crop to the last max_length tokens"
            )
        # ids fed one at a time to a cache were sampled from this model: no range check needed
        x = self.embedding(ids, check=cache is None or t > 1)  # (B, T, C)
        if self.position_embedding is not None:
            x = x + self.position_embedding(t, offset)  # (B, T, C) + (T, C)
        x = maybe_dropout(self.dropout, x)
        for i, block in enumerate(self.blocks):
            x = block(x, None if cache is None else cache[i])  # (B, T, C)
        if last_only:
            x = x[:, -1:, :]  # (B, 1, C): generation needs only the next-token logits
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.head(x)  # (B, T, C) @ (C, V) -> (B, T, V)

    @torch.no_grad()
    def embeddings(self) -> dict[str, Tensor]:
        """Token, position and output-head vectors, for inspection plots."""
        out = {"token": self.embedding.weight.detach(), "head": self.head.weight.detach()}
        if self.position_embedding is not None:
            out["position"] = self.position_embedding.weight.detach()
        return out

"""A static key/value cache for incremental decoding (as in gpt-fast): one buffer for every block.

Shapes: L blocks, B batch, H heads, N capacity (positions), D head size.
The keys and values of the tokens seen so far live in one preallocated ``(L, 2, B, H, N, D)`` tensor,
allocated once per generation. Decoding a token then costs that token's projections, not the whole
prefix's: block ``i`` writes the new positions' keys and values with ``update(i, kv)`` and attends over
everything written so far; ``advance`` moves the write position once every block has written.
"""

from __future__ import annotations

import torch
from torch import Tensor


class KVCache:
    """Fixed-capacity cache of ``n_layers`` blocks; ``length`` positions are filled."""

    def __init__(
        self,
        n_layers: int,
        batch: int,
        heads: int,
        capacity: int,
        dim_head: int,
        *,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str | None = None,
    ) -> None:
        if capacity < 1 or n_layers < 1:
            raise ValueError(f"a KV cache needs capacity >= 1 and n_layers >= 1, got {capacity} and {n_layers}")
        self.capacity = capacity
        self.buffer = torch.zeros(n_layers, 2, batch, heads, capacity, dim_head, dtype=dtype, device=device)
        self._views()
        self.length = 0
        self.last_ids: Tensor | None = None  # (B, 1): the last token fed, for a model that reads token pairs

    def _views(self) -> None:
        # per block, the (2, B, H, N, D) view of its keys and values, looked up once: indexing costs time at
        # every token
        self.layers = [self.buffer[i] for i in range(self.buffer.shape[0])]

    @property
    def batch(self) -> int:
        return self.buffer.shape[2]

    def update(self, layer: int, kv: Tensor) -> tuple[Tensor, Tensor]:
        """Write block ``layer``'s keys and values ``kv (2, B, H, T, D)`` at positions ``length .. length + T``
        (one copy for both); return its filled keys and values, each ``(B, H, length + T, D)``."""
        start, t = self.length, kv.shape[3]
        if start + t > self.capacity:
            raise ValueError(f"KV cache overflow: {start} cached + {t} new > capacity {self.capacity}")
        cached = self.layers[layer]
        cached.narrow(3, start, t).copy_(kv)
        filled = cached.narrow(3, 0, start + t)  # (2, B, H, length + T, D)
        return filled[0], filled[1]

    def advance(self, t: int) -> None:
        """Every block has written ``t`` new positions."""
        self.length += t

    def reset(self) -> None:
        self.length = 0
        self.last_ids = None

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows ``index`` (beam search follows its surviving hypotheses). Only the filled
        positions are copied: copying the whole capacity cost beam search 40 % of its time."""
        n = self.length
        if self.last_ids is not None:
            self.last_ids = self.last_ids.index_select(0, index)
        filled = self.buffer[:, :, :, :, :n]  # (L, 2, B, H, n, D)
        if len(index) == self.batch:  # same batch: rewrite the filled part in place
            self.buffer[:, :, :, :, :n] = filled.index_select(2, index)  # the right side is a copy
            return
        buffer = self.buffer.new_empty((*self.buffer.shape[:2], len(index), *self.buffer.shape[3:]))
        buffer[:, :, :, :, :n] = filled.index_select(2, index)  # past ``length`` is never read
        self.buffer = buffer
        self._views()

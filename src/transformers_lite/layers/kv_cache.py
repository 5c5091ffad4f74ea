"""A static key/value cache for incremental decoding (as in gpt-fast): one buffer for every block.

Shapes: L blocks, B batch, H heads, N capacity (positions), D head size.
The keys and values of the tokens seen so far live in one preallocated ``(L, 2, B, H, N, D)`` tensor,
allocated once per generation. Decoding a token then costs that token's projections, not the whole
prefix's: block ``i`` writes the new positions with ``update(i, k, v)`` and attends over everything
written so far; ``advance`` moves the write position once every block has written.
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

    def _views(self) -> None:
        # per block, the (B, H, N, D) key and value views, looked up once: indexing costs time at every token
        self.keys = [self.buffer[i, 0] for i in range(self.buffer.shape[0])]
        self.values = [self.buffer[i, 1] for i in range(self.buffer.shape[0])]

    @property
    def batch(self) -> int:
        return self.buffer.shape[2]

    def update(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write block ``layer``'s ``k, v (B, H, T, D)`` at positions ``length .. length + T``; return its
        filled keys and values ``(B, H, length + T, D)``."""
        start = self.length
        end = start + k.shape[2]
        if end > self.capacity:
            raise ValueError(f"KV cache overflow: {start} cached + {k.shape[2]} new > capacity {self.capacity}")
        keys, values = self.keys[layer], self.values[layer]
        keys[:, :, start:end] = k
        values[:, :, start:end] = v
        return keys[:, :, :end], values[:, :, :end]

    def advance(self, t: int) -> None:
        """Every block has written ``t`` new positions."""
        self.length += t

    def reset(self) -> None:
        self.length = 0

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows ``index`` (beam search follows its surviving hypotheses). Only the filled
        positions are copied: copying the whole capacity cost beam search 40 % of its time."""
        n = self.length
        filled = self.buffer[:, :, :, :, :n]  # (L, 2, B, H, n, D)
        if len(index) == self.batch:  # same batch: rewrite the filled part in place
            self.buffer[:, :, :, :, :n] = filled.index_select(2, index)  # the right side is a copy
            return
        buffer = self.buffer.new_empty((*self.buffer.shape[:2], len(index), *self.buffer.shape[3:]))
        buffer[:, :, :, :, :n] = filled.index_select(2, index)  # past ``length`` is never read
        self.buffer = buffer
        self._views()

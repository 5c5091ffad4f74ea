"""Rotary position embedding (RoPE, Su et al. 2021) applied to queries and keys inside attention.

Shapes: B batch, H heads, T time, D head size (even). Pairs of channels ``(x[2i], x[2i+1])`` at
position ``t`` are rotated by the angle ``t / base^(2i/D)``, so ``q·k`` depends only on the
relative offset between the two positions. Cos/sin tables are precomputed buffers.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .steps import Count, SummaryRow


class RotaryEmbedding(nn.Module):
    cos: Tensor  # buffers: (L, D/2)
    sin: Tensor

    def __init__(self, dim: int, max_length: int = 1000, base: float = 10000.0) -> None:
        super().__init__()
        if dim % 2 != 0:
            raise ValueError(f"rotary embedding needs an even head size, got dim={dim}")
        self.dim, self.max_length = dim, max_length
        inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (D/2,)
        angles = torch.arange(max_length, dtype=torch.float64)[:, None] * inv_freq[None, :]  # (L, D/2)
        self.register_buffer("cos", angles.cos().float(), persistent=False)  # (L, D/2)
        self.register_buffer("sin", angles.sin().float(), persistent=False)  # (L, D/2)

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        return [(0, "", f"RotaryEmbedding({self.dim}, max_length={self.max_length})", 0, 2 * self.cos.numel())]

    def angles(self, t: int, offset: int = 0, dtype: torch.dtype = torch.float32) -> tuple[Tensor, Tensor]:
        """The cosines and sines ``(T, D/2)`` of positions ``offset .. offset + t``."""
        if offset + t > self.max_length:
            raise ValueError(f"position {offset + t} exceeds rotary max_length={self.max_length}")
        return self.cos[offset : offset + t].to(dtype), self.sin[offset : offset + t].to(dtype)  # (T, D/2) each

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Rotate ``x (B, H, T, D)`` whose first token sits at absolute position ``offset``."""
        cos, sin = self.angles(x.shape[-2], offset, x.dtype)  # (T, D/2) each
        x1, x2 = x[..., 0::2], x[..., 1::2]  # (B, H, T, D/2) each
        out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (B, H, T, D/2, 2)
        return out.flatten(-2)  # (B, H, T, D)

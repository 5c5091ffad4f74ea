"""Post 000's lesson on batched multiplication, in code: matrix products written as loops, beside the
built-in batched kernel. ``benchmarks/bench_matmul.py`` times them.

Row-major translation: the post's ``C[i, j, k] = Σ_r A[i, r, k] B[r, j, k]`` (column-major, batch last)
is ``C[k, i, j] = Σ_r A[k, i, r] B[k, r, j]`` here (batch first), which ``torch.matmul`` computes.

* ``mul2d``: three Python loops, one multiply-add at a time (the post's ``mul2d``).
* ``mul3d``: a loop over the batch calling the built-in 2-D product (the post's ``mul3d``).
* ``mul4d``: two loops over the batch dimensions calling the built-in 2-D product (the post's ``mul4d``).
* ``torch.matmul`` does all of them as one batched call.
"""

from __future__ import annotations

import torch
from torch import Tensor


def _check(a: Tensor, b: Tensor, dims: int) -> None:
    if a.dim() != dims or b.dim() != dims:
        raise ValueError(f"mul{dims}d needs {dims}-D tensors, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ValueError(f"shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")


def mul2d(a: Tensor, b: Tensor) -> Tensor:
    """``C[i, j] = Σ_r A[i, r] B[r, j]`` with three loops over Python numbers: ``(n, m) @ (m, p) -> (n, p)``."""
    _check(a, b, 2)
    x, y = a.tolist(), b.tolist()
    n, m, p = a.shape[0], a.shape[1], b.shape[1]
    c = [[0.0] * p for _ in range(n)]
    for i in range(n):
        for j in range(p):
            total = 0.0
            for r in range(m):
                total += x[i][r] * y[r][j]
            c[i][j] = total
    return torch.tensor(c, dtype=a.dtype)


def mul3d(a: Tensor, b: Tensor) -> Tensor:
    """One 2-D product per batch entry: ``(K, n, m) @ (K, m, p) -> (K, n, p)``."""
    _check(a, b, 3)
    out = torch.empty(a.shape[0], a.shape[1], b.shape[2], dtype=a.dtype)
    for k in range(a.shape[0]):
        out[k] = a[k] @ b[k]  # (n, m) @ (m, p) -> (n, p)
    return out


def mul4d(a: Tensor, b: Tensor) -> Tensor:
    """Two loops over the batch dimensions (batch, heads): ``(B, H, n, m) @ (B, H, m, p) -> (B, H, n, p)``."""
    _check(a, b, 4)
    out = torch.empty(*a.shape[:2], a.shape[2], b.shape[3], dtype=a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] @ b[i, j]  # (n, m) @ (m, p) -> (n, p)
    return out

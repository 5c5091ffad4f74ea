"""The 4-D batched matmul as a ``torch.autograd.Function`` with the hand-written backward.

``Mul4d.apply(A, B)`` equals ``A @ B`` for ``A (..., n, k)``, ``B (..., k, m)``; its backward is
post 000's mul4d rule (``dA = dC Bᵀ``, ``dB = Aᵀ dC`` per batch entry) instead of autograd's.
``scaled_dot_attention(..., matmul=mul4d)`` runs attention through it.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .ops import matmul_backward


class Mul4d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor) -> Tensor:  # noqa: ANN001
        ctx.save_for_backward(a, b)
        return a @ b  # (..., n, k) @ (..., k, m) -> (..., n, m)

    @staticmethod
    def backward(ctx, dc: Tensor):  # noqa: ANN001, ANN205
        a, b = ctx.saved_tensors
        return matmul_backward(dc, (a, b))


def mul4d(a: Tensor, b: Tensor) -> Tensor:
    return Mul4d.apply(a, b)

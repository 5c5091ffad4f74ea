"""Forward and backward of the elementary operations, row-major ``(B, T, C)``.

Notation: B batch, T time, C channels, H heads, D head size, K classes. ``dX`` is the gradient of
the loss with respect to ``X``. The posts (column-major) write a dense layer as ``Y = W X + b`` with
``X (C_in, T, B)``; row-major we write ``Y = X Wᵀ + b`` with ``X (B, T, C_in)``, so the post's
``dW = dY Xᵀ`` becomes ``dW = dYᵀ X`` summed over batch and time.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def _sum_to_rows(x: Tensor) -> Tensor:
    return x.reshape(-1, x.shape[-1])  # (..., n) -> (N, n)


# ---------------------------------------------------------------- linear, embedding, additions
def linear_forward(x: Tensor, w: Tensor, b: Tensor | None):
    return x @ w.T + (0 if b is None else b), (x, w, b is not None)  # (..., in) @ (in, out) -> (..., out)


def linear_backward(dy: Tensor, cache):  # noqa: ANN001
    x, w, has_bias = cache
    dx = dy @ w  # (..., out) @ (out, in) -> (..., in)
    dw = _sum_to_rows(dy).T @ _sum_to_rows(x)  # (out, N) @ (N, in) -> (out, in)
    db = _sum_to_rows(dy).sum(0) if has_bias else None
    return dx, dw, db


def embedding_forward(ids: Tensor, table: Tensor):
    return table[ids], (ids, table.shape)  # (B, T) -> (B, T, C)


def embedding_backward(dy: Tensor, cache) -> Tensor:  # noqa: ANN001
    """Scatter-add: every occurrence of a token adds its gradient to that token's row."""
    ids, shape = cache
    dtable = torch.zeros(shape, dtype=dy.dtype)
    return dtable.index_add_(0, ids.reshape(-1), dy.reshape(-1, shape[1]))  # (V, C)


def add_position_forward(x: Tensor, table: Tensor):
    return x + table[: x.shape[1]], None  # (B, T, C) + (T, C): the table is a constant


def add_position_backward(dy: Tensor, cache) -> Tensor:  # noqa: ANN001
    return dy


def residual_forward(a: Tensor, b: Tensor):
    return a + b, None


def residual_backward(dy: Tensor, cache):  # noqa: ANN001
    return dy, dy


# ---------------------------------------------------------------- batched matmul (post 000's mul4d)
def matmul_forward(a: Tensor, b: Tensor):
    return a @ b, (a, b)  # (..., n, k) @ (..., k, m) -> (..., n, m), per batch entry


def matmul_backward(dc: Tensor, cache):  # noqa: ANN001
    """The mul4d rule, per batch entry: ``dA = dC Bᵀ`` and ``dB = Aᵀ dC``."""
    a, b = cache
    return dc @ b.transpose(-2, -1), a.transpose(-2, -1) @ dc


# ---------------------------------------------------------------- softmax and attention
def softmax_forward(x: Tensor):
    y = torch.softmax(x, dim=-1)
    return y, y


def softmax_backward(dy: Tensor, y: Tensor) -> Tensor:
    """Jacobian-vector product ``J dy`` with ``J = diag(y) - y yᵀ``, without forming ``J``."""
    return y * (dy - (dy * y).sum(-1, keepdim=True))


def attention_forward(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    """``O = P V``, ``P = softmax(Q Kᵀ / sqrt(D))`` with masked scores excluded (True = may attend)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    s, mm1 = matmul_forward(q, k.transpose(-2, -1))  # (.., T, D) @ (.., D, S) -> (.., T, S)
    s = s * scale
    if mask is not None:
        s = s.masked_fill(~mask, torch.finfo(s.dtype).min)
    p, sm = softmax_forward(s)
    if mask is not None:
        p = p.masked_fill(~mask, 0.0)
    o, mm2 = matmul_forward(p, v)  # (.., T, S) @ (.., S, D) -> (.., T, D)
    return o, (mm1, sm, mm2, mask, scale)


def attention_backward(do: Tensor, cache):  # noqa: ANN001
    mm1, sm, mm2, mask, scale = cache
    dp, dv = matmul_backward(do, mm2)
    if mask is not None:
        dp = dp.masked_fill(~mask, 0.0)  # masked weights were set to constants
    ds = softmax_backward(dp, sm)
    if mask is not None:
        ds = ds.masked_fill(~mask, 0.0)  # masked scores were replaced by a constant
    ds = ds * scale
    dq, dkt = matmul_backward(ds, mm1)
    return dq, dkt.transpose(-2, -1), dv


def split_heads_forward(x: Tensor, heads: int):
    b, t, c = x.shape
    return x.reshape(b, t, heads, c // heads).permute(0, 2, 1, 3), x.shape  # (B, T, H·D) -> (B, H, T, D)


def split_heads_backward(dy: Tensor, shape) -> Tensor:  # noqa: ANN001
    return dy.permute(0, 2, 1, 3).reshape(shape)  # (B, H, T, D) -> (B, T, H·D)


def merge_heads_forward(x: Tensor):
    b, h, t, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(b, t, h * d), x.shape  # (B, H, T, D) -> (B, T, H·D)


def merge_heads_backward(dy: Tensor, shape) -> Tensor:  # noqa: ANN001
    b, h, t, d = shape
    return dy.reshape(b, t, h, d).permute(0, 2, 1, 3)  # (B, T, H·D) -> (B, H, T, D)


# ---------------------------------------------------------------- normalisation and activations
def layer_norm_forward(x: Tensor, gain: Tensor, bias: Tensor, eps: float = 1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased variance, as LayerNorm
    inv = 1.0 / torch.sqrt(var + eps)
    xhat = (x - mu) * inv
    return xhat * gain + bias, (xhat, inv, gain)


def layer_norm_backward(dy: Tensor, cache):  # noqa: ANN001
    """``dx = inv·(dx̂ - mean(dx̂) - x̂·mean(dx̂ ⊙ x̂))`` with ``dx̂ = dy ⊙ gain``."""
    xhat, inv, gain = cache
    dxhat = dy * gain
    dx = inv * (dxhat - dxhat.mean(-1, keepdim=True) - xhat * (dxhat * xhat).mean(-1, keepdim=True))
    return dx, _sum_to_rows(dy * xhat).sum(0), _sum_to_rows(dy).sum(0)


def layer_norm_posts_forward(x: Tensor, gain: Tensor, bias: Tensor, eps: float = 1e-5):
    """The posts' convention (Flux's LayerNorm of the time): ``x̂ = (x - μ) / (σ + ε)`` with ``σ`` the
    biased standard deviation; PyTorch divides by ``sqrt(σ² + ε)`` instead. The two differ by ~ε/σ."""
    mu = x.mean(-1, keepdim=True)
    sigma = ((x - mu) ** 2).mean(-1, keepdim=True).sqrt()
    s = sigma + eps
    xhat = (x - mu) / s
    return xhat * gain + bias, (xhat, s, sigma, gain)


def layer_norm_posts_backward(dy: Tensor, cache):  # noqa: ANN001
    """``dx = (dx̂ - mean(dx̂) - x̂·mean(dx̂ ⊙ x̂)·s/σ) / s`` with ``s = σ + ε`` (``s/σ`` -> 1 as ε -> 0,
    giving PyTorch's formula)."""
    xhat, s, sigma, gain = cache
    dxhat = dy * gain
    dx = (dxhat - dxhat.mean(-1, keepdim=True) - xhat * (dxhat * xhat).mean(-1, keepdim=True) * s / sigma) / s
    return dx, _sum_to_rows(dy * xhat).sum(0), _sum_to_rows(dy).sum(0)


def relu_forward(x: Tensor):
    return x.clamp(min=0), x > 0


def relu_backward(dy: Tensor, positive: Tensor) -> Tensor:
    return dy * positive


def gelu_forward(x: Tensor):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2))), x


def gelu_backward(dy: Tensor, x: Tensor) -> Tensor:
    """``d/dx [x Φ(x)] = Φ(x) + x φ(x)`` (exact, erf-based GELU)."""
    cdf = 0.5 * (1 + torch.erf(x / math.sqrt(2)))
    pdf = torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return dy * (cdf + x * pdf)


# post 001's activations: sigmoid, tanh (= 2 sigmoid(2x) - 1; the draft's 2 sigmoid(x) - 1 is tanh(x/2)), and
# "softrelu" x sigmoid(x) (SiLU); softplus (not in the draft) is here for its derivative, the sigmoid
def sigmoid_forward(x: Tensor):
    y = 1.0 / (1.0 + torch.exp(-x))
    return y, y


def sigmoid_backward(dy: Tensor, y: Tensor) -> Tensor:
    """``σ' = σ (1 - σ)``, from the saved output."""
    return dy * y * (1 - y)


def tanh_forward(x: Tensor):
    y = 2.0 * sigmoid_forward(2.0 * x)[0] - 1.0
    return y, y


def tanh_backward(dy: Tensor, y: Tensor) -> Tensor:
    """``tanh' = 1 - tanh²``."""
    return dy * (1 - y * y)


def softplus_forward(x: Tensor):
    """``log(1 + eˣ)``, written ``max(x, 0) + log(1 + e^{-|x|})`` so large ``x`` cannot overflow."""
    return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs())), x


def softplus_backward(dy: Tensor, x: Tensor) -> Tensor:
    """``d/dx log(1 + eˣ) = σ(x)``."""
    return dy * sigmoid_forward(x)[0]


def softrelu_forward(x: Tensor):
    s = sigmoid_forward(x)[0]
    return x * s, (x, s)


def softrelu_backward(dy: Tensor, cache) -> Tensor:  # noqa: ANN001
    """``d/dx [x σ(x)] = σ + x σ (1 - σ)``."""
    x, s = cache
    return dy * (s + x * s * (1 - s))


def dropout_forward(x: Tensor, p: float, generator: torch.Generator | None = None):
    """Inverted dropout; the mask is saved so the backward pass drops the same entries."""
    keep = (torch.rand(x.shape, generator=generator, dtype=x.dtype) >= p).to(x.dtype) / (1 - p)
    return x * keep, keep


def dropout_backward(dy: Tensor, keep: Tensor) -> Tensor:
    return dy * keep


# ---------------------------------------------------------------- the flatten head and the losses
def flatten_head_forward(x: Tensor, w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor):
    """Dense(C -> 1) -> flatten -> Dense(T -> K): ``(B, T, C) -> (B, T, 1) -> (B, T) -> (B, K)``."""
    h, c1 = linear_forward(x, w1, b1)  # (B, T, 1)
    z, c2 = linear_forward(h.squeeze(-1), w2, b2)  # (B, T) -> (B, K)
    return z, (c1, c2)


def flatten_head_backward(dz: Tensor, cache):  # noqa: ANN001
    c1, c2 = cache
    dh, dw2, db2 = linear_backward(dz, c2)
    dx, dw1, db1 = linear_backward(dh.unsqueeze(-1), c1)
    return dx, dw1, db1, dw2, db2


def cross_entropy_forward(logits: Tensor, labels: Tensor):
    """Mean over the batch of ``-log softmax(z)[y]``."""
    logp = torch.log_softmax(logits, dim=-1)
    return -logp.gather(-1, labels[:, None]).mean(), (logp, labels)


def cross_entropy_backward(cache) -> Tensor:  # noqa: ANN001
    """``dz = (softmax(z) - onehot(y)) / B``."""
    logp, labels = cache
    dz = logp.exp()
    dz[torch.arange(len(labels)), labels] -= 1
    return dz / len(labels)


# ---------------------------------------------------------------- post 001's logistic regression
def logistic_regression_forward(x: Tensor, w: Tensor, b: Tensor, y: Tensor):
    """Post 001's warm-up model: ``P = softmax(X Wᵀ + b)`` over ``K`` classes for ``X (N, F)``, and the
    summed cross-entropy ``L = -Σ Y ⊙ log P`` with one-hot ``Y (N, K)``. (The post writes column-major
    ``softmax(W x + b)`` per sample; the draft's ``crossentropy`` also drops the minus sign.)"""
    z, lin = linear_forward(x, w, b)  # (N, F) @ (F, K) -> (N, K)
    logp = torch.log_softmax(z, dim=-1)
    return -(y * logp).sum(), (lin, logp, y)


def logistic_regression_backward(cache):  # noqa: ANN001
    """``dZ = P - Y`` (per sample, the summed loss), then the dense rule: ``dW = dZᵀ X``, ``db = Σ dZ``."""
    lin, logp, y = cache
    dz = logp.exp() - y * y.sum(-1, keepdim=True)
    _, dw, db = linear_backward(dz, lin)
    return dw, db


def binary_cross_entropy_forward(logits: Tensor, targets: Tensor):
    """Mean of ``max(z, 0) - z·y + log(1 + exp(-|z|))`` (stable logit BCE)."""
    loss = logits.clamp(min=0) - logits * targets + torch.log1p(torch.exp(-logits.abs()))
    return loss.mean(), (logits, targets)


def binary_cross_entropy_backward(cache) -> Tensor:  # noqa: ANN001
    """``dz = (sigmoid(z) - y) / N``."""
    logits, targets = cache
    return (torch.sigmoid(logits) - targets) / logits.numel()

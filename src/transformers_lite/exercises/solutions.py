"""A solution to every exercise, as a learner would write it: plain PyTorch on the exercise's tensors,
self-contained (no call into this library), its shapes commented. ``tlite exercise solution NAME``
prints one with the imports it needs (``IMPORTS``), and exactly that text passes ``tlite exercise
check`` (a test checks each one). Shapes: N rows (tokens), T tokens, C channels, F feed-forward units,
H heads, D head size, V vocabulary; ours are row-major (a token is a row), the posts' column-major.
"""

# ruff: noqa: ANN001, ANN201, PLR0913 - each function is printed for a learner as it is written here

from __future__ import annotations

import math

import torch

IMPORTS = "import math\n\nimport torch\n"


def dense_forward(x, w, b):
    return x @ w.T + b  # (N, in) @ (in, out) + (out,) -> (N, out)


def dense_backward(x, w, b, dy):
    dx = dy @ w  # (N, out) @ (out, in) -> (N, in)
    dw = dy.T @ x  # (out, N) @ (N, in) -> (out, in): summed over the rows
    db = dy.sum(0)  # (out,): b was added to every row
    return dx, dw, db


def relu_backward(a, dy):
    return dy * (a > 0)  # (N, F): passes where ReLU passed its input, 0 where it stopped it


def gelu_backward(a, dy):
    cdf = 0.5 * (1 + torch.erf(a / math.sqrt(2)))  # Φ(a), (N, F)
    pdf = torch.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)  # φ(a) = Φ'(a), (N, F)
    return dy * (cdf + a * pdf)  # d/da [a Φ(a)] = Φ(a) + a φ(a)


def softmax_forward(s):
    e = torch.exp(s - s.amax(-1, keepdim=True))  # (H, T, T), less each row's maximum: no overflow
    return e / e.sum(-1, keepdim=True)  # each row sums to 1


def softmax_backward(p, dp):
    # the Jacobian of a row is diag(p) - p pᵀ; applied to dp without forming it: p ⊙ dp - p (pᵀ dp)
    return p * (dp - (dp * p).sum(-1, keepdim=True))  # (H, T, T), the sum over each row's keys


def cross_entropy_backward(z, y):
    n = z.shape[0]
    dz = torch.softmax(z, -1)  # (N, V)
    dz[torch.arange(n), y] -= 1  # softmax(z) - onehot(y)
    return dz / n  # the loss is the mean over the N rows


def layer_norm_forward(x, gamma, beta, eps):
    mu = x.mean(-1, keepdim=True)  # (N, 1)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # (N, 1): divided by C, not C - 1
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta  # (N, C)


def layer_norm_backward(x, gamma, beta, eps, dy):
    mu = x.mean(-1, keepdim=True)  # (N, 1)
    inv = 1 / torch.sqrt(((x - mu) ** 2).mean(-1, keepdim=True) + eps)  # (N, 1)
    xhat = (x - mu) * inv  # (N, C)
    dxhat = dy * gamma  # (N, C)
    dx = inv * (dxhat - dxhat.mean(-1, keepdim=True) - xhat * (dxhat * xhat).mean(-1, keepdim=True))
    return dx, (dy * xhat).sum(0), dy.sum(0)  # (N, C), (C,), (C,)


def rms_norm_backward(x, gamma, eps, dy):
    r = 1 / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)  # (N, 1): 1 / RMS
    dx = r * dy * gamma - r**3 * x * (dy * gamma * x).mean(-1, keepdim=True)  # (N, C)
    return dx, (dy * x * r).sum(0)  # (N, C), (C,)


def attention_forward(q, k, v, mask):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (H, T, D) @ (H, D, T) -> (H, T, T)
    s = s.masked_fill(~mask, float("-inf"))  # a masked key gets no weight
    return torch.softmax(s, -1) @ v  # (H, T, T) @ (H, T, D) -> (H, T, D)


def attention_backward(q, k, v, mask, do):
    scale = 1 / math.sqrt(q.shape[-1])
    s = (q @ k.transpose(-2, -1) * scale).masked_fill(~mask, float("-inf"))  # (H, T, T)
    p = torch.softmax(s, -1)  # (H, T, T)
    dv = p.transpose(-2, -1) @ do  # (H, T, T) @ (H, T, D) -> (H, T, D)
    dp = do @ v.transpose(-2, -1)  # (H, T, D) @ (H, D, T) -> (H, T, T)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * scale  # softmax's backward, then the scale
    dq = ds @ k  # (H, T, T) @ (H, T, D) -> (H, T, D)
    dk = ds.transpose(-2, -1) @ q  # (H, T, T) @ (H, T, D) -> (H, T, D)
    return dq, dk, dv


def batched_matmul_backward(a, b, dc):
    da = dc @ b.transpose(-2, -1)  # (H, T, D) @ (H, D, T) -> (H, T, T)
    db = a.transpose(-2, -1) @ dc  # (H, T, T) @ (H, T, D) -> (H, T, D)
    return da, db


def merge_heads_forward(a):
    h, t, d = a.shape
    return a.transpose(0, 1).reshape(t, h * d)  # (H, T, D) -> (T, H, D) -> (T, H·D)


def merge_heads_backward(dm, heads):
    t, c = dm.shape
    return dm.reshape(t, heads, c // heads).transpose(0, 1)  # (T, H·D) -> (T, H, D) -> (H, T, D)


def embedding_backward(ids, table, dy):
    dtable = torch.zeros_like(table)  # (V, C)
    return dtable.index_add_(0, ids, dy)  # row ids[t] += dy[t]: a token read twice gets both


def residual_backward(x, f, dy):
    return dy, dy  # y = x + f: each term receives dy unchanged


def tied_output_backward(x, e, dz):
    dx = dz @ e  # (T, V) @ (V, C) -> (T, C)
    de = dz.T @ x  # (V, T) @ (T, C) -> (V, C)
    return dx, de


def block_forward(x, w_qkv, b_qkv, w_o, b_o, gamma1, beta1, w1, b1, w2, b2, gamma2, beta2, heads, mask, eps):
    t, c = x.shape
    d = c // heads

    def layer_norm(z, gamma, beta):
        mu = z.mean(-1, keepdim=True)  # (T, 1)
        return gamma * (z - mu) / torch.sqrt(((z - mu) ** 2).mean(-1, keepdim=True) + eps) + beta

    qkv = x @ w_qkv.T + b_qkv  # (T, C) @ (C, 3C) -> (T, 3C): [Q K V]
    q, k, v = (part.reshape(t, heads, d).transpose(0, 1) for part in qkv.split(c, -1))  # (H, T, D) each
    s = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~mask, float("-inf"))  # (H, T, T)
    a = torch.softmax(s, -1) @ v  # (H, T, D)
    merged = a.transpose(0, 1).reshape(t, c)  # (T, H·D)
    h = layer_norm(x + merged @ w_o.T + b_o, gamma1, beta1)  # post-norm: the sum, then its norm
    hidden = torch.relu(h @ w1.T + b1)  # (T, F)
    return layer_norm(h + hidden @ w2.T + b2, gamma2, beta2)  # (T, C)


def sgd_step(w, g, lr):
    return w - lr * g  # against the gradient


def adam_step(w, g, m, v, step, lr, beta1, beta2, eps, weight_decay):
    w = w * (1 - lr * weight_decay)  # AdamW: the decay apart from the gradient
    m = beta1 * m + (1 - beta1) * g  # the running mean of g
    v = beta2 * v + (1 - beta2) * g * g  # the running mean of g²
    m_hat, v_hat = m / (1 - beta1**step), v / (1 - beta2**step)  # both started at 0: corrected
    return w - lr * m_hat / (torch.sqrt(v_hat) + eps), m, v


def muon_step(w, g, m, lr, momentum, weight_decay):
    m = momentum * m + (1 - momentum) * g  # the momentum, as SGD's
    x = (1 - momentum) * g + momentum * m  # Nesterov: a look ahead along it, (rows, cols)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T  # work on the wide side: x xᵀ is the smaller square
    x = x / (torch.linalg.norm(x) + 1e-7)  # every singular value now at most 1
    for _ in range(5):  # Newton–Schulz: each singular value σ -> aσ + bσ³ + cσ⁵, towards 1
        gram = x @ x.T  # (r, r)
        x = 3.4445 * x + (-4.7750 * gram + 2.0315 * gram @ gram) @ x
    if tall:
        x = x.T
    scale = max(1.0, w.shape[0] / w.shape[1]) ** 0.5  # a tall matrix's step as large per element as a square one's
    return w * (1 - lr * weight_decay) - lr * scale * x, m


def masked_scores_backward(s, mask, dp):
    p = torch.softmax(s.masked_fill(~mask, float("-inf")), -1)  # (H, T, T): a masked key gets weight 0
    # M is a constant (0 or −∞): the gradient goes through S + M to S unchanged, then through the softmax;
    # where the mask hides a key, p = 0 and so is the gradient
    return p * (dp - (dp * p).sum(-1, keepdim=True))


def block_backward(x, w_qkv, b_qkv, w_o, b_o, gamma1, beta1, w1, b1, w2, b2, gamma2, beta2, heads, mask, eps, dy):
    t, c = x.shape
    d = c // heads

    def norm(z, gamma, beta):  # layer norm, and what its backward reads
        mu = z.mean(-1, keepdim=True)  # (T, 1)
        inv = 1 / torch.sqrt(((z - mu) ** 2).mean(-1, keepdim=True) + eps)  # (T, 1)
        zhat = (z - mu) * inv  # (T, C)
        return gamma * zhat + beta, (zhat, inv, gamma)

    def norm_back(dout, saved):
        zhat, inv, gamma = saved
        dzhat = dout * gamma  # (T, C)
        return inv * (dzhat - dzhat.mean(-1, keepdim=True) - zhat * (dzhat * zhat).mean(-1, keepdim=True))

    # the forward again, keeping what the backward reads
    qkv = x @ w_qkv.T + b_qkv  # (T, C) @ (C, 3C) -> (T, 3C)
    q, k, v = (part.reshape(t, heads, d).transpose(0, 1) for part in qkv.split(c, -1))  # (H, T, D) each
    s = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~mask, float("-inf"))  # (H, T, T)
    p = torch.softmax(s, -1)  # (H, T, T)
    merged = (p @ v).transpose(0, 1).reshape(t, c)  # (H, T, D) -> (T, H·D)
    h, saved1 = norm(x + merged @ w_o.T + b_o, gamma1, beta1)  # (T, C)
    pre = h @ w1.T + b1  # (T, F)
    hidden = torch.relu(pre)  # (T, F)
    _, saved2 = norm(h + hidden @ w2.T + b2, gamma2, beta2)
    # the backward, from y to x
    dsum2 = norm_back(dy, saved2)  # (T, C): through LN₂
    dw2 = dsum2.T @ hidden  # (C, T) @ (T, F) -> (C, F)
    dpre = (dsum2 @ w2) * (pre > 0)  # (T, C) @ (C, F) -> (T, F), then through the ReLU
    dw1 = dpre.T @ h  # (F, T) @ (T, C) -> (F, C)
    dh = dsum2 + dpre @ w1  # (T, C): the residual path and the feed-forward's
    dsum1 = norm_back(dh, saved1)  # (T, C): through LN₁
    dw_o = dsum1.T @ merged  # (C, T) @ (T, C) -> (C, C)
    da = (dsum1 @ w_o).reshape(t, heads, d).transpose(0, 1)  # (T, C) -> (H, T, D)
    dp = da @ v.transpose(-2, -1)  # (H, T, D) @ (H, D, T) -> (H, T, T)
    dv = p.transpose(-2, -1) @ da  # (H, T, T) @ (H, T, D) -> (H, T, D)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True)) / math.sqrt(d)  # through the softmax and the scale
    dq, dk = ds @ k, ds.transpose(-2, -1) @ q  # (H, T, D) each
    dqkv = torch.cat([g.transpose(0, 1).reshape(t, c) for g in (dq, dk, dv)], -1)  # (T, 3C): [∂Q ∂K ∂V]
    dw_qkv = dqkv.T @ x  # (3C, T) @ (T, C) -> (3C, C)
    dx = dsum1 + dqkv @ w_qkv  # (T, C): the residual path and attention's
    return dx, dw_qkv, dw_o, dw1, dw2


def swiglu_backward(a, u, dh):
    s = torch.sigmoid(a)  # σ(a), (N, F)
    g = a * s  # SiLU(a) = a σ(a): the gate
    da = dh * u * s * (1 + a * (1 - s))  # ∂h/∂a = u SiLU'(a), SiLU'(a) = σ(a) + a σ(a)(1 − σ(a))
    du = dh * g  # ∂h/∂u = g
    return da, du


def grouped_query_attention_forward(q, k, v, mask):
    r = q.shape[0] // k.shape[0]  # query heads per key/value head, H / G
    k, v = k.repeat_interleave(r, 0), v.repeat_interleave(r, 0)  # (G, T, D) -> (H, T, D): head h reads h // r
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (H, T, D) @ (H, D, T) -> (H, T, T)
    s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v  # (H, T, T) @ (H, T, D) -> (H, T, D)


def grouped_query_attention_backward(q, k, v, mask, do):
    g, r = k.shape[0], q.shape[0] // k.shape[0]  # G key/value heads, each read by r = H / G query heads
    kr, vr = k.repeat_interleave(r, 0), v.repeat_interleave(r, 0)  # (H, T, D) each
    scale = 1 / math.sqrt(q.shape[-1])
    p = torch.softmax((q @ kr.transpose(-2, -1) * scale).masked_fill(~mask, float("-inf")), -1)  # (H, T, T)
    dp = do @ vr.transpose(-2, -1)  # (H, T, D) @ (H, D, T) -> (H, T, T)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * scale  # softmax's backward, then the scale
    dq = ds @ kr  # (H, T, T) @ (H, T, D) -> (H, T, D)
    dkr, dvr = ds.transpose(-2, -1) @ q, p.transpose(-2, -1) @ do  # (H, T, D) each: per query head
    # a key/value head was read by its r query heads: its gradient is the sum of theirs
    return dq, dkr.reshape(g, r, *dkr.shape[1:]).sum(1), dvr.reshape(g, r, *dvr.shape[1:]).sum(1)

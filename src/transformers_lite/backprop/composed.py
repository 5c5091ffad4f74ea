"""Composed backward passes: a full encoder block and the whole post-000 classifier, by hand.

Parameters are read from the real modules (``layers.Block``, ``models.TransformerClassifier``)
so the hand gradients can be compared parameter by parameter with autograd on the same model.
The block is post-norm and evaluated without dropout (``dropout_masks`` can supply saved masks).
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import ops


def _attention_params(block) -> dict[str, Tensor]:  # noqa: ANN001
    mha = block.attention
    c = mha.dim
    w, b = mha.qkv.weight.detach(), mha.qkv.bias
    b = None if b is None else b.detach()
    part = lambda t, i: None if t is None else t[i * c : (i + 1) * c]  # noqa: E731
    return {
        "wq": part(w, 0),
        "wk": part(w, 1),
        "wv": part(w, 2),
        "bq": part(b, 0),
        "bk": part(b, 1),
        "bv": part(b, 2),
        "wo": mha.out.weight.detach(),
        "bo": mha.out.bias.detach(),
    }


def encoder_block_forward(block, x: Tensor, mask: Tensor | None = None):  # noqa: ANN001
    """Post-norm block: ``h = LN1(x + MHA(x))``, ``y = LN2(h + W2 relu(W1 h))``."""
    if block.attention_residual.norm_first:
        raise ValueError("the hand-derived block follows the posts: post-norm (norm_first=False)")
    heads = block.attention.n_heads
    norm1, norm2 = block.attention_residual.norm, block.feed_forward_residual.norm
    p = _attention_params(block)
    q, cq = ops.linear_forward(x, p["wq"], p["bq"])  # (B, T, H·D)
    k, ck = ops.linear_forward(x, p["wk"], p["bk"])
    v, cv = ops.linear_forward(x, p["wv"], p["bv"])
    (qh, sq), (kh, sk), (vh, sv) = (ops.split_heads_forward(t, heads) for t in (q, k, v))  # (B, H, T, D)
    a, ca = ops.attention_forward(qh, kh, vh, mask)  # (B, H, T, D)
    m, sm = ops.merge_heads_forward(a)  # (B, T, H·D)
    o, co = ops.linear_forward(m, p["wo"], p["bo"])  # (B, T, C)
    h1, _ = ops.residual_forward(x, o)
    n1, cn1 = ops.layer_norm_forward(h1, norm1.weight.detach(), norm1.bias.detach(), norm1.eps)
    ff = block.feed_forward
    f1, cf1 = ops.linear_forward(n1, ff.dense1.weight.detach(), ff.dense1.bias.detach())  # (B, T, F)
    act_fwd = ops.relu_forward if ff.activation.name == "relu" else ops.gelu_forward
    r, cr = act_fwd(f1)
    f2, cf2 = ops.linear_forward(r, ff.dense2.weight.detach(), ff.dense2.bias.detach())  # (B, T, C)
    h2, _ = ops.residual_forward(n1, f2)
    y, cn2 = ops.layer_norm_forward(h2, norm2.weight.detach(), norm2.bias.detach(), norm2.eps)
    return y, dict(
        cq=cq,
        ck=ck,
        cv=cv,
        sq=sq,
        sk=sk,
        sv=sv,
        ca=ca,
        sm=sm,
        co=co,
        cn1=cn1,
        cf1=cf1,
        cr=cr,
        cf2=cf2,
        cn2=cn2,
        relu=ff.activation.name == "relu",
    )


def encoder_block_backward(dy: Tensor, cache: dict):
    """Returns ``(dx, grads)`` with ``grads`` keyed by the block's parameter names."""
    c = cache
    dh2, g_ln2, b_ln2 = ops.layer_norm_backward(dy, c["cn2"])
    dn1_res, df2 = ops.residual_backward(dh2, None)
    dr, dw2, db2 = ops.linear_backward(df2, c["cf2"])
    df1 = ops.relu_backward(dr, c["cr"]) if c["relu"] else ops.gelu_backward(dr, c["cr"])
    dn1_ff, dw1, db1 = ops.linear_backward(df1, c["cf1"])
    dh1, g_ln1, b_ln1 = ops.layer_norm_backward(dn1_res + dn1_ff, c["cn1"])
    dx_res, do = ops.residual_backward(dh1, None)
    dm, dwo, dbo = ops.linear_backward(do, c["co"])
    da = ops.merge_heads_backward(dm, c["sm"])
    dqh, dkh, dvh = ops.attention_backward(da, c["ca"])
    dq, dk, dv = (ops.split_heads_backward(g, s) for g, s in ((dqh, c["sq"]), (dkh, c["sk"]), (dvh, c["sv"])))
    dxq, dwq, dbq = ops.linear_backward(dq, c["cq"])
    dxk, dwk, dbk = ops.linear_backward(dk, c["ck"])
    dxv, dwv, dbv = ops.linear_backward(dv, c["cv"])
    grads = {
        "attention.qkv.weight": torch.cat([dwq, dwk, dwv]),
        "attention.out.weight": dwo,
        "attention.out.bias": dbo,
        "attention_residual.norm.weight": g_ln1,
        "attention_residual.norm.bias": b_ln1,
        "feed_forward.dense1.weight": dw1,
        "feed_forward.dense1.bias": db1,
        "feed_forward.dense2.weight": dw2,
        "feed_forward.dense2.bias": db2,
        "feed_forward_residual.norm.weight": g_ln2,
        "feed_forward_residual.norm.bias": b_ln2,
    }
    if dbq is not None:
        grads["attention.qkv.bias"] = torch.cat([dbq, dbk, dbv])
    return dx_res + dxq + dxk + dxv, grads


def post_classifier_forward(model, ids: Tensor, labels: Tensor):  # noqa: ANN001
    """Loss of post 000's classifier (embedding -> +PE -> blocks -> flatten head -> cross-entropy)."""
    cfg = model.config
    if cfg.head != "flatten" or cfg.members != 1 or cfg.bigram_buckets:
        raise ValueError("the hand-derived classifier is post 000's: head='flatten', one member, no bigram table")
    encoder = model.encoder
    x, ce = ops.embedding_forward(ids, encoder.embedding.weight.detach())
    x, _ = ops.add_position_forward(x, encoder.position_encoding.weight)
    block_caches = []
    for block in encoder.blocks:
        x, cb = encoder_block_forward(block, x)
        block_caches.append(cb)
    head = model.head
    z, ch = ops.flatten_head_forward(
        x,
        head.dense_token.weight.detach(),
        head.dense_token.bias.detach(),
        head.dense_out.weight.detach(),
        head.dense_out.bias.detach(),
    )
    if z.shape[1] == 1:
        loss, cl = ops.binary_cross_entropy_forward(z[:, 0], labels.to(z.dtype))
    else:
        loss, cl = ops.cross_entropy_forward(z, labels)
    return loss, (ce, block_caches, ch, cl, z.shape[1] == 1)


def post_classifier_backward(cache) -> dict[str, Tensor]:  # noqa: ANN001
    """Gradient of the loss for every parameter, keyed by ``model.named_parameters()`` names."""
    ce, block_caches, ch, cl, binary = cache
    dz = ops.binary_cross_entropy_backward(cl)[:, None] if binary else ops.cross_entropy_backward(cl)
    dx, dw1, db1, dw2, db2 = ops.flatten_head_backward(dz, ch)
    grads = {
        "head.dense_token.weight": dw1,
        "head.dense_token.bias": db1,
        "head.dense_out.weight": dw2,
        "head.dense_out.bias": db2,
    }
    for i in reversed(range(len(block_caches))):
        dx, block_grads = encoder_block_backward(dx, block_caches[i])
        grads.update({f"encoder.blocks.{i}.{k}": v for k, v in block_grads.items()})
    dx = ops.add_position_backward(dx, None)
    grads["encoder.embedding.weight"] = ops.embedding_backward(dx, ce)
    return grads


class HandAdam:
    """Adam by hand: ``m = β1 m + (1-β1) g``, ``v = β2 v + (1-β2) g²``,
    ``p -= lr · m̂ / (sqrt(v̂) + ε)`` with ``m̂ = m / (1-β1ᵗ)``, ``v̂ = v / (1-β2ᵗ)``."""

    def __init__(
        self, params: dict[str, Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        self.params, self.lr, self.betas, self.eps, self.t = params, lr, betas, eps, 0
        self.m = {k: torch.zeros_like(p) for k, p in params.items()}
        self.v = {k: torch.zeros_like(p) for k, p in params.items()}

    @torch.no_grad()
    def step(self, grads: dict[str, Tensor]) -> None:
        b1, b2 = self.betas
        self.t += 1
        for name, p in self.params.items():
            g = grads[name]
            self.m[name] = b1 * self.m[name] + (1 - b1) * g
            self.v[name] = b2 * self.v[name] + (1 - b2) * g * g
            m_hat = self.m[name] / (1 - b1**self.t)
            v_hat = self.v[name] / (1 - b2**self.t)
            p -= self.lr * m_hat / (torch.sqrt(v_hat) + self.eps)

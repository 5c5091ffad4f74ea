"""Every hand-derived backward pass against autograd, in float64: the table of ``tlite backprop check``.

Each check draws random inputs and a random upstream gradient ``dY``, computes the hand gradients,
and compares them with ``torch.autograd.grad`` of ``sum(Y ⊙ dY)``; the reported error is the
largest absolute difference over all gradients of that operation.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..config import ClassifierConfig
from ..layers import Block, BlockSpec, scaled_dot_attention
from ..layers.masks import causal_mask
from ..models import build_model
from . import composed, ops
from .autograd_fn import mul4d

TOLERANCE = 1e-9
DT = torch.float64


def _r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=DT)


def _compare(autograd_fn: Callable, inputs: list[torch.Tensor], dy: torch.Tensor, hand: list) -> float:  # noqa: ANN001
    leaves = [t.clone().requires_grad_(True) for t in inputs]
    out = autograd_fn(*leaves)
    grads = torch.autograd.grad((out * dy).sum(), leaves, allow_unused=True)
    return max(float((g - h).abs().max()) for g, h in zip(grads, hand) if g is not None and h is not None)


def check_linear() -> float:
    x, w, b, dy = _r(2, 3, 4), _r(5, 4), _r(5), _r(2, 3, 5)
    _, c = ops.linear_forward(x, w, b)
    return _compare(lambda x, w, b: F.linear(x, w, b), [x, w, b], dy, list(ops.linear_backward(dy, c)))


def check_embedding() -> float:
    table, ids, dy = _r(6, 3), torch.tensor([[1, 4, 1], [0, 1, 5]]), _r(2, 3, 3)
    _, c = ops.embedding_forward(ids, table)
    return _compare(lambda t: F.embedding(ids, t), [table], dy, [ops.embedding_backward(dy, c)])


def check_position() -> float:
    x, table, dy = _r(2, 5, 4), _r(8, 4), _r(2, 5, 4)
    return _compare(lambda x: x + table[:5], [x], dy, [ops.add_position_backward(dy, None)])


def check_matmul(dims: int) -> float:
    lead = (2, 3)[: dims - 2]
    a, b, dc = _r(*lead, 4, 5), _r(*lead, 5, 3), _r(*lead, 4, 3)
    _, c = ops.matmul_forward(a, b)
    return _compare(torch.matmul, [a, b], dc, list(ops.matmul_backward(dc, c)))


def check_softmax() -> float:
    x, dy = _r(3, 4, 6), _r(3, 4, 6)
    y, c = ops.softmax_forward(x)
    return _compare(lambda x: torch.softmax(x, -1), [x], dy, [ops.softmax_backward(dy, c)])


def check_attention() -> float:
    q, k, v, do = _r(2, 2, 5, 4), _r(2, 2, 6, 4), _r(2, 2, 6, 4), _r(2, 2, 5, 4)
    mask = torch.ones(2, 1, 5, 6, dtype=torch.bool)
    mask[0, 0, :, 4:] = False  # padding keys
    mask[1, 0, 2] = False  # a fully masked query row
    _, c = ops.attention_forward(q, k, v, mask)
    err = _compare(
        lambda q, k, v: scaled_dot_attention(q, k, v, mask)[0], [q, k, v], do, list(ops.attention_backward(do, c))
    )
    _, c = ops.attention_forward(q[..., :5, :], k[..., :5, :], v[..., :5, :], causal_mask(5))
    err2 = _compare(
        lambda q, k, v: scaled_dot_attention(q, k, v, causal_mask(5))[0],
        [q[..., :5, :], k[..., :5, :], v[..., :5, :]],
        do[..., :5, :],
        list(ops.attention_backward(do[..., :5, :], c)),
    )
    return max(err, err2)


def check_heads() -> float:
    x, dy = _r(2, 3, 8), _r(2, 4, 3, 2)
    _, shape = ops.split_heads_forward(x, 4)
    e1 = _compare(lambda x: x.view(2, 3, 4, 2).transpose(1, 2), [x], dy, [ops.split_heads_backward(dy, shape)])
    h, dm = _r(2, 4, 3, 2), _r(2, 3, 8)
    _, shape = ops.merge_heads_forward(h)
    e2 = _compare(lambda h: h.transpose(1, 2).reshape(2, 3, 8), [h], dm, [ops.merge_heads_backward(dm, shape)])
    return max(e1, e2)


def check_layer_norm() -> float:
    x, g, b, dy = _r(2, 3, 6), _r(6), _r(6), _r(2, 3, 6)
    _, c = ops.layer_norm_forward(x, g, b)
    return _compare(lambda x, g, b: F.layer_norm(x, (6,), g, b), [x, g, b], dy, list(ops.layer_norm_backward(dy, c)))


def check_layer_norm_posts() -> float:
    """The posts' ``(x - μ) / (σ + ε)`` against autograd of the same formula (ε = 0.1 makes the
    difference from PyTorch's convention visible: it is also reported)."""
    x, g, b, dy = _r(2, 3, 6), _r(6), _r(6), _r(2, 3, 6)
    _, c = ops.layer_norm_posts_forward(x, g, b, eps=0.1)

    def posts(x, g, b):  # noqa: ANN001, ANN202
        mu = x.mean(-1, keepdim=True)
        return (x - mu) / (((x - mu) ** 2).mean(-1, keepdim=True).sqrt() + 0.1) * g + b

    return _compare(posts, [x, g, b], dy, list(ops.layer_norm_posts_backward(dy, c)))


ACTIVATIONS: dict[str, tuple[Callable, Callable, Callable]] = {
    "relu": (F.relu, ops.relu_forward, ops.relu_backward),
    "gelu": (F.gelu, ops.gelu_forward, ops.gelu_backward),
    "sigmoid": (torch.sigmoid, ops.sigmoid_forward, ops.sigmoid_backward),
    "tanh": (torch.tanh, ops.tanh_forward, ops.tanh_backward),
    "softplus": (F.softplus, ops.softplus_forward, ops.softplus_backward),
    "softrelu": (F.silu, ops.softrelu_forward, ops.softrelu_backward),
}


def check_activation(name: str) -> float:
    """The hand backward against autograd of PyTorch's own function (so the forward is checked too)."""
    reference, forward, backward = ACTIVATIONS[name]
    x, dy = _r(4, 7) * 3, _r(4, 7)
    y, c = forward(x)
    return max(float((y - reference(x)).abs().max()), _compare(reference, [x], dy, [backward(dy, c)]))


def check_logistic_regression() -> float:
    x, w, b = _r(20, 4), _r(2, 4), _r(2)
    y = F.one_hot((x.sum(-1) < 0).long(), 2).to(DT)  # post 001's synthetic "classify" rule
    _, c = ops.logistic_regression_forward(x, w, b, y)
    loss = lambda w, b: -(y * torch.log_softmax(F.linear(x, w, b), -1)).sum()  # noqa: E731
    return _compare(loss, [w, b], torch.ones((), dtype=DT), list(ops.logistic_regression_backward(c)))


def check_dropout() -> float:
    x, dy = _r(4, 6), _r(4, 6)
    _, keep = ops.dropout_forward(x, 0.3, torch.Generator().manual_seed(0))
    return _compare(lambda x: x * keep, [x], dy, [ops.dropout_backward(dy, keep)])


def check_residual() -> float:
    a, b, dy = _r(2, 3), _r(2, 3), _r(2, 3)
    return _compare(lambda a, b: a + b, [a, b], dy, list(ops.residual_backward(dy, None)))


def check_flatten_head() -> float:
    x, w1, b1, w2, b2, dz = _r(2, 5, 4), _r(1, 4), _r(1), _r(3, 5), _r(3), _r(2, 3)
    _, c = ops.flatten_head_forward(x, w1, b1, w2, b2)
    return _compare(
        lambda x, w1, b1, w2, b2: F.linear(F.linear(x, w1, b1).squeeze(-1), w2, b2),
        [x, w1, b1, w2, b2],
        dz,
        list(ops.flatten_head_backward(dz, c)),
    )


def check_losses() -> float:
    z, y = _r(5, 4), torch.tensor([0, 3, 1, 1, 2])
    _, c = ops.cross_entropy_forward(z, y)
    e1 = _compare(lambda z: F.cross_entropy(z, y), [z], torch.ones((), dtype=DT), [ops.cross_entropy_backward(c)])
    zb, t = _r(6) * 4, torch.tensor([0, 1, 1, 0, 1, 0], dtype=DT)
    _, c = ops.binary_cross_entropy_forward(zb, t)
    e2 = _compare(
        lambda z: F.binary_cross_entropy_with_logits(z, t),
        [zb],
        torch.ones((), dtype=DT),
        [ops.binary_cross_entropy_backward(c)],
    )
    return max(e1, e2)


def check_encoder_block() -> float:
    block = Block(BlockSpec(8, 2, 16, dropout=0.0)).double()
    x, dy = _r(2, 5, 8), _r(2, 5, 8)
    y_hand, c = composed.encoder_block_forward(block, x)
    dx, grads = composed.encoder_block_backward(dy, c)
    leaf = x.clone().requires_grad_(True)
    y = block(leaf)
    y_value = y.detach()
    params = dict(block.named_parameters())
    auto = torch.autograd.grad((y * dy).sum(), [leaf, *params.values()])
    errs = [float((y_value - y_hand).abs().max()), float((auto[0] - dx).abs().max())]
    errs += [float((g - grads[n]).abs().max()) for n, g in zip(params, auto[1:])]
    return max(errs)


def check_post_classifier() -> float:
    cfg = ClassifierConfig(vocab_size=20, max_length=6, dim=8, n_heads=2, dim_hidden=16, n_labels=3, dropout=0.0)
    model = build_model(cfg).double()
    ids, labels = torch.randint(0, 20, (4, 6)), torch.tensor([0, 2, 1, 2])
    loss_hand, c = composed.post_classifier_forward(model, ids, labels)
    grads = composed.post_classifier_backward(c)
    loss = F.cross_entropy(model(ids), labels)
    params = dict(model.named_parameters())
    auto = torch.autograd.grad(loss, list(params.values()))
    if set(grads) != set(params):
        raise AssertionError(f"hand gradients miss {sorted(set(params) - set(grads))}")
    return max(
        [abs(float(loss.detach() - loss_hand))] + [float((g - grads[n]).abs().max()) for n, g in zip(params, auto)]
    )


def check_mul4d_function() -> float:
    a, b, dc = _r(2, 3, 4, 5), _r(2, 3, 5, 2), _r(2, 3, 4, 2)
    la, lb = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    out = mul4d(la, lb)
    ga, gb = torch.autograd.grad((out * dc).sum(), [la, lb])
    return max(float((out.detach() - a @ b).abs().max()), _compare(torch.matmul, [a, b], dc, [ga, gb]))


CHECKS: dict[str, Callable[[], float]] = {
    "linear (W, b, X)": check_linear,
    "embedding (scatter-add)": check_embedding,
    "position-encoding addition": check_position,
    "matmul 3-D": lambda: check_matmul(3),
    "matmul 4-D (mul4d rule)": lambda: check_matmul(4),
    "softmax (Jacobian-vector product)": check_softmax,
    "scaled dot attention + masks": check_attention,
    "multi-head split and merge": check_heads,
    "layer norm": check_layer_norm,
    "layer norm, the posts' (σ + ε)": check_layer_norm_posts,
    "ReLU": lambda: check_activation("relu"),
    "GELU": lambda: check_activation("gelu"),
    "sigmoid (post 001)": lambda: check_activation("sigmoid"),
    "tanh (post 001)": lambda: check_activation("tanh"),
    "softplus": lambda: check_activation("softplus"),
    "softrelu x·σ(x) (post 001)": lambda: check_activation("softrelu"),
    "dropout (saved mask)": check_dropout,
    "residual addition": check_residual,
    "post 000 classifier head (flatten)": check_flatten_head,
    "cross-entropy / binary cross-entropy": check_losses,
    "encoder block (composed)": check_encoder_block,
    "post 000 classifier (every parameter)": check_post_classifier,
    "Mul4d autograd.Function": check_mul4d_function,
    "logistic regression (post 001)": check_logistic_regression,
}


def run_checks(seed: int = 0) -> list[tuple[str, float, bool]]:
    torch.manual_seed(seed)
    return [(name, err, err <= TOLERANCE) for name, fn in CHECKS.items() for err in [fn()]]

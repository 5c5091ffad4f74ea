"""The posts' hand-derived backward rules, one per kind of step (``layers.steps.KINDS``).

A rule takes a step as a forward computed it, its output ``y``, the gradient ``dy`` of the loss with
respect to it, and the tensors it read (``inputs``, in the order its layer named them), and gives the
gradient of each input: ``[(gradient, formula) | None, ...]``. Tensors keep their batch, row-major
``(B, T, C)``; the posts write the same rules column-major (their ``dW = dY Xᵀ`` is our ``dYᵀ X``).
Nothing here reads a step's name: ``RULES`` maps a kind to its rule (``rule_of``: a family of kinds,
``activation:NAME``, shares one rule that reads the nonlinearity's own record, ``layers.activations``), and
a kind without one has no hand rule (``backprop.driver`` says so rather than guess).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..layers.activations import activation as nonlinearity
from ..layers.steps import Step
from . import ops

Given = list[tuple[Tensor, str] | None]  # per input: its gradient and the formula that gave it
Rule = Callable[[Step, Tensor, Tensor, list[Tensor | None]], Given]


def _rows(x: Tensor) -> Tensor:
    return x.reshape(-1, x.shape[-1])  # (..., n) -> (N, n): every batch entry and position a row


def _merge(y: Tensor) -> Tensor:
    """Heads ``(B, H, T, D)`` side by side: ``(B, T, H·D)`` (a Q, K or V step's output as the Dense gave it)."""
    b, h, t, d = y.shape
    return y.transpose(1, 2).reshape(b, t, h * d)


_LETTER = {"query": "W_Q", "key": "W_K", "value": "W_V"}  # a Q, K or V step's part of the one Dense, by its role


def projection(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``y = x Wᵀ + b`` (for Q, K, V: the rows ``step.rows`` of the [Q; K; V] Dense, cut into heads; the
    flatten head's one score per position, squeezed): ``∂x = ∂y W``, ``∂W = Σ_rows ∂yᵀ x``, ``∂b = Σ_rows ∂y``."""
    x, w, b = (inputs + [None, None])[:3]
    if x is None or w is None:
        return [None] * len(inputs)
    name = _LETTER.get(step.role, "W")
    if step.rows is not None:  # a part of the [Q; K; V] Dense: its rows, and the heads merged back
        start, stop = step.rows
        w, dy = w[start:stop], _merge(dy)
    elif dy.dim() == x.dim() - 1:  # one output squeezed away: (B, T) from (B, T, 1)
        dy = dy[..., None]
    grads: Given = [(dy @ w, f"∂y · {name}")]  # (..., out) @ (out, in) -> (..., in)
    dw = _rows(dy).T @ _rows(x)  # (out, N) @ (N, in) -> (out, in)
    db = _rows(dy).sum(0) if b is not None else None
    if step.rows is not None:  # the rows of this part of the weight (and bias); the others get nothing from it
        index = torch.arange(*step.rows, device=dw.device)
        dw = torch.zeros_like(inputs[1]).index_copy_(0, index, dw)  # type: ignore[arg-type]
        if db is not None and b is not None:
            db = torch.zeros_like(b).index_copy_(0, index, db)
    grads.append((dw, f"Σ_rows ∂yᵀ · x (∂{name})"))
    grads.append(None if db is None else (db, "Σ_rows ∂y (∂b)"))
    return grads + [None] * (len(inputs) - 3)


def activation(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``h = act(x W₁ᵀ + b₁)``: with ``a = x W₁ᵀ + b₁``, ``∂a = ∂h ⊙ act'(a)`` (the derivative the
    nonlinearity's record holds; a name without a record is a ``ValueError``), then a Dense's rule on ``∂a``."""
    x, w, b = inputs
    assert x is not None and w is not None
    a = x @ w.T + (0 if b is None else b)  # (..., C) @ (C, F) -> (..., F)
    name = step.kind.partition(":")[2]
    da = dy * nonlinearity(name).derivative(a)
    dense = projection(Step("projection", step.axes, "", "", ""), a, da, inputs)
    return [None if g is None else (g[0], g[1].replace("∂y", f"(∂h ⊙ {name}'(a))")) for g in dense]


def layer_norm(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """The posts' LayerNorm backward: ``∂x = (∂x̂ − mean ∂x̂ − x̂ mean(∂x̂ ⊙ x̂)) / s`` with ``∂x̂ = ∂y ⊙ γ``,
    ``s = √(σ² + ε)``; ``∂γ = Σ_rows ∂y ⊙ x̂``, ``∂β = Σ_rows ∂y``."""
    x, gain, bias = inputs
    assert x is not None and gain is not None and bias is not None and step.eps is not None
    _, cache = ops.layer_norm_forward(x, gain, bias, step.eps)
    dx, dgain, dbias = ops.layer_norm_backward(dy, cache)
    return [(dx, "(∂x̂ − mean ∂x̂ − x̂ mean(∂x̂ ⊙ x̂)) / s, ∂x̂ = ∂y ⊙ γ"), (dgain, "Σ_rows ∂y ⊙ x̂"), (dbias, "Σ_rows ∂y")]


def rms_norm(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``y = γ ⊙ x / r`` with ``r = √(mean(x²) + ε)`` per row: with ``x̂ = x / r`` and ``∂x̂ = ∂y ⊙ γ``,
    ``∂x = (∂x̂ − x̂ mean(∂x̂ ⊙ x̂)) / r`` (layer norm's rule without the mean: nothing was subtracted);
    ``∂γ = Σ_rows ∂y ⊙ x̂``."""
    x, gain = inputs[0], inputs[1]
    assert x is not None and gain is not None and step.eps is not None
    r = torch.sqrt((x * x).mean(-1, keepdim=True) + step.eps)  # (..., 1)
    xhat, dxhat = x / r, dy * gain
    dx = (dxhat - xhat * (dxhat * xhat).mean(-1, keepdim=True)) / r
    return [(dx, "(∂x̂ − x̂ mean(∂x̂ ⊙ x̂)) / r, ∂x̂ = ∂y ⊙ γ"), (_rows(dy * xhat).sum(0), "Σ_rows ∂y ⊙ x̂"), None]


def _to_shape(g: Tensor, shape: torch.Size) -> Tensor:
    """``g`` summed over the axes a term of ``shape`` was broadcast along (a position table over the batch)."""
    while g.dim() > len(shape):
        g = g.sum(0)
    return g


def add(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """A sum of terms: each term gets ``∂y`` (summed over what it was broadcast along)."""
    return [None if x is None else (_to_shape(dy, x.shape), "∂y") for x in inputs]


def scores(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``S = Q Kᵀ`` per batch entry and head (post 000's ``mul4d`` rule): ``∂Q = ∂S K``, ``∂K = ∂Sᵀ Q``."""
    q, k = inputs
    assert q is not None and k is not None
    return [
        (dy @ k, "∂S · K"),
        (dy.transpose(-1, -2) @ q, "∂Sᵀ · Q"),
    ]  # (.., T, S) @ (.., S, D); (.., S, T) @ (.., T, D)


def scale(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    assert step.factor is not None
    return [(dy * step.factor, f"∂y · {step.factor:.4g}")]


def masked(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``S + M``: the gradient passes where ``M`` is 0 and stops where it is −∞ (post 004: "zero where -inf")."""
    x, mask = inputs
    assert mask is not None
    return [(dy.masked_fill(mask.isneginf(), 0.0), "∂y where M = 0, 0 where M = −∞"), None]


def softmax(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``P = softmax(s)`` along the last axis: ``∂s = P ⊙ (∂P − Σ ∂P ⊙ P)``, the Jacobian ``diag(P) − P Pᵀ``
    applied without forming it."""
    return [(ops.softmax_backward(dy, y), "P ⊙ (∂P − Σ ∂P ⊙ P)")]


def weighted_sum(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``A = P V``: ``∂P = ∂A Vᵀ``, ``∂V = Pᵀ ∂A``."""
    p, v = inputs
    assert p is not None and v is not None
    return [(dy @ v.transpose(-1, -2), "∂A · Vᵀ"), (p.transpose(-1, -2) @ dy, "Pᵀ · ∂A")]


def merge_heads(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``[A₁ … A_H]`` is a reshape: its gradient is reshaped back to ``(B, H, T, D)``."""
    heads = inputs[0]
    assert heads is not None
    b, h, t, d = heads.shape
    return [(dy.reshape(b, t, h, d).transpose(1, 2), "∂y reshaped back into heads")]


def rotary(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """A rotation by θ is undone by the rotation by −θ: ``∂x = R(−θ) ∂y``, pair by pair of channels."""
    x, cos, sin = inputs
    assert cos is not None and sin is not None
    d1, d2 = dy[..., 0::2], dy[..., 1::2]  # (.., T, D/2) each
    back = torch.stack((d1 * cos + d2 * sin, -d1 * sin + d2 * cos), dim=-1).flatten(-2)  # (.., T, D)
    return [(back, "R(−θ) · ∂y"), None, None]


def embedding(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """Rows of a table by id: the table's gradient is the scatter-add of the rows' (times the scale)."""
    ids, table = (inputs + [None, None])[:2]
    if ids is None or table is None:
        return [None] * len(inputs)
    g = dy * step.factor if step.factor is not None else dy
    hand = torch.zeros_like(table).index_add_(0, ids.reshape(-1), _rows(g).to(table.dtype))
    return [None, (hand, "scatter-add of ∂(rows) by token id")]


def position(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """Row ``t`` of a learned position table gets ``∂(position t)``; a fixed table reads nothing."""
    if not inputs or inputs[0] is None:
        return [None] * len(inputs)
    hand = torch.zeros_like(inputs[0])
    hand[: dy.shape[-2]] = dy
    return [(hand, "row t: ∂(position t)")]


def mean_pool(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``x̄ = (1/n) Σ_t valid_t x_t``: ``∂x_t = valid_t ∂x̄ / n``."""
    x, valid = inputs
    assert x is not None
    w = torch.ones(x.shape[:-1], dtype=x.dtype, device=x.device) if valid is None else valid.to(x.dtype)  # (B, T)
    n = w.sum(-1, keepdim=True).clamp(min=1.0)  # (B, 1)
    return [((w / n)[..., None] * dy[:, None, :], "∂x̄ / n at each word read, 0 at padding"), None]


def mixture(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """The ensemble's ``ℓ = log mean_m softmax(z_m)``: with ``p_m = softmax(z_m)`` and ``g_m = (p_m / Σ_m
    p_m) ⊙ ∂ℓ``, ``∂z_m = g_m − p_m Σ_k g_m``. One logit per member, ``ℓ = log p̄ − log(1 − p̄)`` with
    ``p̄ = mean σ(z_m)``: ``∂z_m = ∂ℓ · σ'(z_m) / M · (1/p̄ + 1/(1 − p̄))``."""
    z = torch.stack([t for t in inputs if t is not None]).to(dy.dtype)  # (M, B, K)
    if z.shape[-1] == 1:
        p = torch.sigmoid(z)
        mean = p.mean(0)
        each = dy * p * (1 - p) / len(z) * (1 / mean + 1 / (1 - mean))  # (M, B, 1)
        return [(g, "∂ℓ · σ'(z_m) / M · (1/p̄ + 1/(1 − p̄))") for g in each]
    p = torch.softmax(z, -1)
    g = p / p.sum(0, keepdim=True) * dy  # (M, B, K): each member's share of ∂ℓ
    each = g - p * g.sum(-1, keepdim=True)
    return [(t, "g_m − p_m Σ g_m, g_m = (p_m / Σ p) ⊙ ∂ℓ") for t in each]


def soft_cap(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``y = c · tanh(z / c)``: ``∂z = ∂y ⊙ (1 − tanh²(z / c)) = ∂y ⊙ (1 − (y / c)²)``, read from the output."""
    assert step.factor is not None
    return [(dy * (1 - (y / step.factor) ** 2), "∂y ⊙ (1 − (y / c)²)")]


def mix(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``y = λ₀ a + λ₁ b`` with a learned pair ``λ``: ``∂a = λ₀ ∂y``, ``∂b = λ₁ ∂y``, ``∂λᵢ = Σ ∂y ⊙`` its term."""
    a, b, weights = inputs
    assert a is not None and b is not None and weights is not None
    dweights = torch.stack(((dy * a).sum(), (dy * b).sum())).to(weights.dtype)
    return [(dy * weights[0], "λ₀ ∂y"), (dy * weights[1], "λ₁ ∂y"), (dweights, "Σ ∂y ⊙ a, Σ ∂y ⊙ b (∂λ)")]


def product(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``h = g ⊙ u`` (a gated feed-forward's gate times its up projection): ``∂g = ∂h ⊙ u``, ``∂u = ∂h ⊙ g``."""
    g, u = inputs
    assert g is not None and u is not None
    return [(dy * u, "∂h ⊙ u"), (dy * g, "∂h ⊙ g")]


def repeat_heads(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """``K̃ = repeat_interleave(K, r)`` over the heads: key/value head ``g`` was read by query heads
    ``g·r … g·r + r − 1``, so ``∂K_g = Σ`` of their gradients."""
    x = inputs[0]
    assert x is not None
    b, groups, s, d = x.shape
    shared = dy.reshape(b, groups, dy.shape[1] // groups, s, d)  # (B, H, S, D) -> (B, G, H/G, S, D)
    return [(shared.sum(2), "Σ over the query heads sharing the head: ∂K_g = Σ_h ∂K̃_h")]


def identity(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    return [(dy, "∂y (the same tensor)")]


def no_inputs(step: Step, y: Tensor, dy: Tensor, inputs: list[Tensor | None]) -> Given:
    """A step computed from no other step (the ids, a mask): nothing to pass back."""
    return [None] * len(inputs)


RULES: dict[str, Rule] = {
    "tokens": no_inputs,
    "mask": no_inputs,
    "embedding": embedding,
    "position": position,
    "sum": add,
    "residual_sum": add,
    "projection": projection,
    "tied_output": projection,
    "norm:layer": layer_norm,
    "norm:rms": rms_norm,
    "rotary": rotary,
    "scores": scores,
    "scale": scale,
    "masked": masked,
    "softmax": softmax,
    "weighted_sum": weighted_sum,
    "merge_heads": merge_heads,
    "mean_pool": mean_pool,
    "mixture": mixture,
    "identity": identity,
    "soft_cap": soft_cap,
    "mix": mix,
    "product": product,
    "repeat_heads": repeat_heads,
    "activation": activation,  # every activation:NAME; the rule reads NAME's record
}
FAMILIES = ("activation",)  # kinds whose every member shares one rule


def rule_of(kind: str) -> Rule | None:
    """The hand rule of steps of ``kind``; ``None``: the kind has none (the driver names the step)."""
    base = kind.partition(":")[0]
    return RULES.get(base) if base in FAMILIES else RULES.get(kind)


def cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """The loss's own rule, ``∂z = (softmax(z) − onehot(y)) / N`` for the ``N`` rows of ``logits (N, K)``
    it scores (one logit: ``σ(z) − y``)."""
    if logits.shape[-1] == 1:
        return torch.sigmoid(logits) - labels.to(logits.dtype)[:, None]
    hand = torch.softmax(logits, -1)
    hand[torch.arange(len(labels), device=hand.device), labels] -= 1
    return hand / len(labels)

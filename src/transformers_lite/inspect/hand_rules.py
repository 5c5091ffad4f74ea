"""The posts' hand-derived backward rules, applied to one example's backward trace
(``inspect.backward``): for each step whose gradient a rule gives from the steps after it, the hand
value beside autograd's and their largest difference.

Rules (the posts write tensors column-major, ``(C, T)``; here rows are positions, ``(T, C)``):

* ``loss``: cross-entropy, ``∂L/∂z = (softmax(z) - onehot(y)) / N`` (one logit: ``σ(z) - y``);
* ``dense``: ``∂L/∂x = ∂L/∂y · W`` (the output layer, the output projection, the feed-forward's
  second Dense);
* ``softmax``: ``∂L/∂s = y ⊙ (∂L/∂y - Σ ∂L/∂y ⊙ y)`` (masked entries get 0);
* ``scaling``: ``∂L/∂(QKᵀ) = ∂L/∂s / √d``;
* ``scores``: ``∂L/∂Q = ∂L/∂S · K`` and ``∂L/∂K = ∂L/∂Sᵀ · Q`` (not with rotary positions: Q and K
  are rotated after they are recorded);
* ``weighted values``: ``∂L/∂A = ∂L/∂H · Vᵀ`` and ``∂L/∂V = Aᵀ · ∂L/∂H``;
* ``attention input``: ``[∂Q ∂K ∂V] · W_qkv`` (plus ``∂(residual sum)`` in a post-norm block, whose
  input also feeds the sum); ``feed-forward input``: ``(∂h ⊙ act'(a)) · W1`` for ReLU and GELU;
* ``layer norm``: the posts' LayerNorm backward, ``inv·(∂x̂ - mean ∂x̂ - x̂·mean(∂x̂ ⊙ x̂))``: the
  sums of post-norm blocks, and in pre-norm models the residual stream, which feeds the next norm and
  the next sum: ``∂x = ∂(next sum) + LN'(∂(next norm))`` (the last: ``LN'(∂(final norm))``);
* ``residual``: ``∂L/∂(branch) = ∂L/∂(sum)``; ``input sum``: each term gets ``∂L/∂(input)``;
* ``classifier head``: one classifier's logits are its head's; an ensemble's ``ℓ = log mean_m softmax(z_m)``
  gives ``∂z_m = g_m - p_m Σ g_m`` with ``g_m = (p_m / Σ p) ⊙ ∂ℓ``; the flatten head ``∂h = ∂z · W_out``,
  ``∂x = ∂h · w_token``; mean pooling ``∂x_t = ∂(pooled) / n`` at each word;
* ``embedding``: the table's gradient is the scatter-add of ``∂L/∂(rows)`` over the token ids, plus,
  when the output layer shares the table, ``∂L/∂(logits)ᵀ · h`` (its use as the output layer); a
  learned position table's row ``t`` gets ``∂L/∂(position t)``.

Autograd alone: the translator's cross-attention and its scaled, shared tables; attention with rotary
positions (Q, K and the attention's input); the GELU-tanh approximation; an ensemble of one logit per
member.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..backprop.ops import gelu_backward, layer_norm_backward, layer_norm_forward, softmax_backward
from .forward import ForwardTrace
from .inspection import inspection


def hand_checks(
    run: Any,  # noqa: ANN401
    forward: ForwardTrace,
    grads: dict[str, Tensor],
    params: dict[str, Tensor],
    logits: Tensor,
    labels: Tensor | None,
    rows: Tensor | None,
) -> dict[str, dict[str, Any]]:
    """``{step: {"rule", "hand_max_diff", "hand"}}``: each step whose gradient the posts' hand-derived
    rules give from the steps after it: the rule, the hand value and its largest difference to autograd's."""
    checks: dict[str, dict[str, Any]] = {}

    def check(name: str, rule: str, hand: Tensor | None) -> None:
        mine = grads.get(name) if not name.startswith("param:") else params.get(name[6:])
        if hand is not None and mine is not None and hand.shape == mine.shape:
            checks[name] = {"rule": rule, "hand_max_diff": float((hand - mine).abs().max()), "hand": hand.detach()}

    cfg, model = run.config, run.model
    if labels is not None and rows is not None and "logits" in grads:
        z = (logits[0] if logits.dim() == 3 else logits)[rows].float()  # the rows the loss reads: (N, V) or (1, K)
        if z.shape[-1] == 1:  # one logit: σ(z) - y
            hand_rows = torch.sigmoid(z) - labels.float()[:, None]
        else:
            hand_rows = torch.softmax(z, -1)
            hand_rows[torch.arange(len(labels)), labels] -= 1
            hand_rows = hand_rows / len(labels)
        hand = torch.zeros((logits[0] if logits.dim() == 3 else logits).shape)
        hand[rows] = hand_rows
        check("logits", "loss: (softmax(z) - onehot(y)) / N", hand.reshape(grads["logits"].shape))
    for name in forward.names():
        if not name.endswith(".attention.weights"):
            continue
        s = name[: -len("weights")]  # "...attention."
        w, v, q, k = (forward.tensors.get(s + n) for n in ("weights", "v", "q", "k"))
        dw, dh, dscaled, dscores = (grads.get(s + n) for n in ("weights", "heads", "scaled", "scores"))
        if w is not None and dw is not None:
            check(s + "scaled", "softmax: y ⊙ (∂y - Σ ∂y ⊙ y)", softmax_backward(dw, w))
        if dscaled is not None and q is not None:
            check(s + "scores", "scaling: ∂s / √d", dscaled / math.sqrt(q.shape[-1]))
        if dscores is not None and q is not None and k is not None and getattr(cfg, "position", "") != "rope":
            if dscores.shape[-1] == k.shape[-2] and dscores.shape[-2] == q.shape[-2]:
                check(s + "q", "scores: ∂S · K", dscores @ k)  # (H, T, T) @ (H, T, D) -> (H, T, D)
                check(s + "k", "scores: ∂Sᵀ · Q", dscores.transpose(-1, -2) @ q)
        if dh is not None and v is not None and w is not None:
            check(s + "weights", "weighted values: ∂H · Vᵀ", dh @ v.transpose(-1, -2))  # (H, T, D) @ (H, D, S)
            check(s + "v", "weighted values: Aᵀ · ∂H", w.transpose(-1, -2) @ dh)
        _dense(check, model, grads, s + "out", s + "merged", s[:-1] + ".out")
        if s + "merged" in grads and dh is not None:  # merging the heads is a reshape: (T, H·D) -> (H, T, D)
            t, hd = grads[s + "merged"].shape[-2:]
            check(
                s + "heads",
                "merge heads: reshape back",
                grads[s + "merged"].reshape(t, dh.shape[0], -1).transpose(0, 1),
            )
        _block_input(check, cfg, model, forward, grads, s)
    for name in forward.names():
        if name.endswith(".feed_forward.out"):
            _dense(check, model, grads, name, name[: -len("out")] + "hidden", name[: -len("out")] + "dense2")
        if name.endswith("_residual.sum"):
            branch = name[: -len("_residual.sum")] + ".out"
            if branch in grads and name in grads:
                check(branch, "residual: ∂(branch) = ∂(sum)", grads[name])
            norm = name[: -len("sum")] + "norm"
            if not cfg.norm_first and norm in grads:  # post-norm: norm = LayerNorm(sum), and sum feeds nothing else
                check(name, LAYER_NORM, _norm_backward(model, norm, forward[name], grads[norm]))
    if cfg.norm_first:
        _stream(check, model, forward, grads)
    for name in forward.names():  # each stack's input = embedding + position (+ pairs)
        scope = name[: -len("input")]
        if name == _scope(name) + "input" and "blocks." not in name and name in grads:
            for part in ("embedding", "position", "pairs"):
                check(scope + part, "input sum: ∂(each term) = ∂(input)", grads[name])
    inspection(run).checks(check, run, forward, grads, params)
    return checks


def generator_checks(check: Any, run: Any, forward: ForwardTrace, grads: dict, params: dict) -> None:  # noqa: ANN401
    """The generator's head (``logits = h Wᵀ + b``, from the final norm or, without one, the last
    block), its embedding table (shared with the head or not) and its learned position table."""
    cfg, model = run.config, run.model
    last = [n for n in forward.names() if n.endswith(("_residual.norm", "_residual.sum", "final_norm")) or n == "input"]
    h = "final_norm" if cfg.final_norm else last[-1]  # what the output layer reads
    if "logits" in grads and h in grads:
        _dense(check, model, grads, "logits", h, "head")
    if cfg.tie_embeddings and "embedding" in grads and "logits" in grads and "embedding.weight" in params:
        hand = torch.zeros_like(params["embedding.weight"]).index_add_(0, forward["tokens"], grads["embedding"].float())
        hand += grads["logits"].float().T @ forward[h].float()  # (V, T) @ (T, C) -> (V, C): the output layer's use
        check("param:embedding.weight", "tied table: scatter-add of ∂(rows) by token id + ∂(logits)ᵀ · h", hand)
    classifier_checks(check, run, forward, grads, params)
    if cfg.position == "learned" and "position" in grads:
        hand = torch.zeros_like(params["position_embedding.weight"])
        hand[: len(grads["position"])] = grads["position"]  # row t of the table is added at position t
        check("param:position_embedding.weight", "learned positions: ∂(row t) = ∂(position t)", hand)


def classifier_checks(check: Any, run: Any, forward: ForwardTrace, grads: dict, params: dict) -> None:  # noqa: ANN401
    """A classifier's head (``_classifier_head``) and an embedding table not tied to the output layer:
    the scatter-add of the rows' gradients."""
    _classifier_head(check, run, forward, grads)
    if getattr(run.config, "tie_embeddings", False):
        return
    for name in forward.names():
        table, ids = name + ".weight", forward.tensors.get(name[: -len("embedding")] + "tokens")
        if name.endswith("embedding") and name in grads and ids is not None and table in params:
            hand = torch.zeros_like(params[table]).index_add_(0, ids, grads[name].float())
            check("param:" + table, "embedding: scatter-add of ∂(rows) by token id", hand)


def _classifier_head(check: Any, run: Any, forward: ForwardTrace, grads: dict[str, Tensor]) -> None:  # noqa: ANN401
    """From the model's logits back to the encoder's output, per member. One classifier: its logits are
    the head's. An ensemble's logits are ``ℓ = log mean_m softmax(z_m)``: with ``p_m = softmax(z_m)`` and
    ``g_m = (p_m / Σ_m p_m) ⊙ ∂ℓ``, ``∂z_m = g_m - p_m Σ_k g_m``. The flatten head (post 000):
    ``∂h = ∂z · W_out`` and ``∂x = ∂h · w_token`` (one score per word); mean pooling: ``∂(pooled) = ∂z · W_out``
    and ``∂x_t = ∂(pooled) / n`` at each of the ``n`` words, 0 at padding."""
    names = forward.names()
    members = [n[: -len("head.logits")] for n in names if n.endswith("head.logits")]  # "" or "members.N."
    if "logits" not in grads or not members:
        return
    if members == [""] and torch.equal(forward["head.logits"], forward["logits"]):
        check("head.logits", "the model's logits are the head's: ∂z = ∂(logits)", grads["logits"])
    elif len(members) > 1 and forward["logits"].shape[-1] > 1:
        z = torch.stack([forward[m + "head.logits"].float() for m in members])  # (M, K)
        p = torch.softmax(z, -1)
        g = p / p.sum(0, keepdim=True) * grads["logits"]  # (M, K): each member's share of ∂ℓ
        rule = "ensemble: g = (p_m / Σ p) ⊙ ∂ℓ, ∂z_m = g - p_m Σ g"
        for i, m in enumerate(members):
            check(m + "head.logits", rule, g[i] - p[i] * g[i].sum())
    model = run.model
    for m in members:
        out, scores, pooled = m + "head.logits", m + "head.scores", m + "head.pooled"
        for into in (scores, pooled):
            _dense(check, model, grads, out, into, m + "head.dense_out")
        if scores in grads and names[names.index(scores) - 1] in grads:  # (T,) from (T, C)
            x, w = names[names.index(scores) - 1], _weight(model, m + "head.dense_token")  # (1, C)
            if w is not None:
                check(x, "flatten head: ∂x = ∂h · w_token", grads[scores][:, None] @ w)  # (T, 1) @ (1, C)
        if pooled in grads and names[names.index(pooled) - 1] in grads and m + "encoder.tokens" in forward.tensors:
            x = names[names.index(pooled) - 1]
            ids, pad = forward[m + "encoder.tokens"], getattr(run.config, "pad_id", None)
            valid = torch.ones(len(ids)) if pad is None else (ids != pad).float()  # (T,)
            hand = valid[:, None] * grads[pooled][None, :] / valid.sum().clamp(min=1.0)  # (T, C)
            check(x, "mean pooling: ∂x_t = ∂(pooled) / n at each word", hand)


def _dense(check: Any, model: Any, grads: dict[str, Tensor], out: str, into: str, module: str) -> None:  # noqa: ANN401
    """``∂L/∂x = ∂L/∂y · W`` for the Dense ``module`` from step ``into`` to step ``out``."""
    if out in grads and into in grads:
        try:
            weight = model.get_submodule(module).weight.detach()
        except AttributeError:
            return
        if grads[out].shape[-1] == weight.shape[0] and grads[into].shape[-1] == weight.shape[1]:
            check(into, "dense: ∂y · W", grads[out] @ weight)


def _block_input(check: Any, cfg: Any, model: Any, forward: ForwardTrace, grads: dict[str, Tensor], s: str) -> None:  # noqa: ANN401
    """The attention's input ``n`` (post-norm: the block's input ``x``; pre-norm: the normed ``LN(x)``)
    feeds Q, K and V: ``∂n = [∂Q ∂K ∂V] (merged) · W_qkv``, plus ``∂(sum)`` when ``n`` is ``x`` itself,
    which also feeds the residual sum. The feed-forward's input ``n`` likewise: ``∂n = (∂h ⊙ act'(a)) · W1``
    with ``a = n · W1ᵀ + b1`` (plus the second sum's gradient, post-norm)."""
    if getattr(cfg, "position", "") == "rope" or s.endswith("cross_attention."):  # cross: K, V read the memory
        return
    names = forward.names()
    block = s[: -len("attention.")]
    into = names[names.index(s + "q") - 1]  # the step just before Q: the attention's input
    parts = [grads[s + n] for n in ("q", "k", "v") if s + n in grads]
    total = block + "attention_residual.sum"
    if into in grads and len(parts) == 3 and total in grads:
        merged = torch.cat([p.transpose(0, 1).reshape(p.shape[1], -1) for p in parts], -1)  # (T, 3C)
        weight = _weight(model, s + "qkv")  # (3C, C)
        if weight is None or merged.shape[-1] != weight.shape[0]:
            return
        if cfg.norm_first and into.endswith("_residual.norm"):
            check(into, "attention input: [∂Q ∂K ∂V] · W_qkv", merged @ weight)  # (T, 3C) @ (3C, C) -> (T, C)
        elif not cfg.norm_first and into.endswith(("input", "_residual.norm")):
            check(into, "block input: [∂Q ∂K ∂V] · W_qkv + ∂(residual sum)", merged @ weight + grads[total])
    hidden = block + "feed_forward.hidden"
    if cfg.activation not in ("relu", "gelu") or hidden not in grads:
        return
    norm = names[names.index(hidden) - 1]  # the feed-forward's input: its norm (pre-norm) or the sum's (post-norm)
    after = block + "feed_forward_residual.sum"
    if norm not in grads or (not cfg.norm_first and after not in grads):
        return
    weight = _weight(model, block + "feed_forward.dense1")  # (F, C)
    if weight is None:
        return
    dense1 = model.get_submodule(block + "feed_forward.dense1")
    if cfg.activation == "relu":  # the gradient passes where the unit fired
        pre, rule = grads[hidden] * (forward[hidden] > 0), "feed-forward input: (∂h ⊙ [h > 0]) · W1"
    else:  # GELU' at the pre-activation a = n · W1ᵀ + b1
        a = F.linear(forward[norm].float(), weight, None if dense1.bias is None else dense1.bias.detach())
        pre, rule = gelu_backward(grads[hidden], a), "feed-forward input: (∂h ⊙ GELU'(a)) · W1"
    hand = pre @ weight  # (T, F) @ (F, C) -> (T, C)
    if not cfg.norm_first:
        hand, rule = hand + grads[after], rule + " + ∂(residual sum)"
    check(norm, rule, hand)


def _weight(model: Any, module: str) -> Tensor | None:  # noqa: ANN401
    """The weight of the submodule at the trace's name ``module``, or ``None`` where the model's modules
    are named otherwise than its steps (the translator's decoder)."""
    try:
        return model.get_submodule(module).weight.detach()
    except AttributeError:
        return None


LAYER_NORM = "layer norm: inv·(∂x̂ - mean ∂x̂ - x̂·mean(∂x̂ ⊙ x̂))"


def _norm_backward(model: Any, module: str, x: Tensor, dy: Tensor) -> Tensor | None:  # noqa: ANN401
    """The posts' LayerNorm backward of the module ``module`` at input ``x``: ``∂x`` from ``∂y``
    (``None`` where no module has the step's name)."""
    try:
        norm = model.get_submodule(module)
    except AttributeError:
        return None
    _, cache = layer_norm_forward(x.float(), norm.weight.detach(), norm.bias.detach(), norm.eps)
    return layer_norm_backward(dy, cache)[0]


def _scope(name: str) -> str:
    """The stack a step belongs to: ``""`` (a GPT), ``"encoder."``, ``"members.0.encoder."``..."""
    return name[: name.find("blocks.")] if "blocks." in name else name[: -len("input")]


def _stream(check: Any, model: Any, forward: ForwardTrace, grads: dict[str, Tensor]) -> None:  # noqa: ANN401
    """Pre-norm: the residual stream ``x`` (the stack's input, then each sum) feeds the next sub-layer's
    norm and the next sum, ``∂x = ∂(next sum) + LN'(∂(next norm))``; the last feeds only the final
    norm, ``∂x = LN'(∂(final norm))``."""
    names = [n for n in forward.names() if n in grads]
    for i, x in enumerate(names):
        if not (x.endswith("_residual.sum") or x == _scope(x) + "input"):
            continue
        scope = _scope(x)
        later = [n for n in names[i + 1 :] if _scope(n) == scope and n.endswith(("_residual.norm", "_residual.sum"))]
        if len(later) >= 2 and later[0].endswith("norm") and later[1].endswith("sum"):
            norm, total = later[:2]
            rule = "residual stream: ∂(next sum) + " + LAYER_NORM.replace(": ", " of ∂(next norm): ")
            through = _norm_backward(model, norm, forward[x], grads[norm])
            check(x, rule, None if through is None else grads[total] + through)
        elif not later and scope + "final_norm" in grads:
            rule = "into the final norm: " + LAYER_NORM.split(": ")[1]
            check(x, rule, _norm_backward(model, scope + "final_norm", forward[x], grads[scope + "final_norm"]))

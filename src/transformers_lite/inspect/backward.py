"""The backward pass of one example, step by step: the loss and, for every named step of the forward
trace (``inspect.forward``), the gradient of the loss with respect to it, from the logits back to the
embedding rows; the gradient of every parameter; and, where the posts derive the step's backward by
hand (``backprop.ops``), that hand-derived gradient beside autograd's with their largest difference.

The forward runs through the model's own code with a trace that keeps each step's tensor alive and asks
autograd to retain its gradient (``GradTrace``); nothing is re-implemented and the weights are never
changed (their ``.grad`` is cleared afterwards). Shapes are the forward trace's, without the batch: a
step ``(T, C)`` has a gradient ``(T, C)``; the posts write both column-major, ``(C, T)``.

Hand-derived rules (each checked against autograd on the same numbers):

* ``loss``: cross-entropy, ``∂L/∂z = (softmax(z) - onehot(y)) / N`` (one logit: ``σ(z) - y``);
* ``softmax``: ``∂L/∂s = y ⊙ (∂L/∂y - Σ ∂L/∂y ⊙ y)`` (masked entries get 0);
* ``scaling``: ``∂L/∂(QKᵀ) = ∂L/∂s / √d``;
* ``scores``: ``∂L/∂Q = ∂L/∂S · K`` and ``∂L/∂K = ∂L/∂Sᵀ · Q`` (not with rotary positions: Q and K
  are rotated after they are recorded);
* ``weighted values``: ``∂L/∂A = ∂L/∂H · Vᵀ`` and ``∂L/∂V = Aᵀ · ∂L/∂H``;
* ``dense``: ``∂L/∂x = ∂L/∂y · W`` (the output projection and the feed-forward's second Dense);
* ``layer norm`` (post-norm blocks): the posts' LayerNorm backward;
* ``residual``: ``∂L/∂(branch) = ∂L/∂(sum)``;
* ``embedding``: the table's gradient is the scatter-add of ``∂L/∂(rows)`` over the token ids (the
  generator and the classifier, without tied tables), and a learned position table's row ``t`` gets
  ``∂L/∂(position t)``.

Every other step (the feed-forward's activation and first Dense, the norms of pre-norm blocks, the
translator's cross-attention and its scaled, shared tables) shows autograd's gradient alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..backprop.ops import layer_norm_backward, layer_norm_forward, softmax_backward
from ..layers.trace import Trace
from .forward import ForwardTrace, _traced
from .inspection import inspection

MAX_SHOWN = 16_384  # values per step in the JSON (4 heads' 64 x 64 weights); larger gradients give their norm only


class GradTrace(Trace):
    """A trace whose tensors stay in the graph: each step's gradient is kept after ``backward``."""

    def __init__(self, *, prefix: str = "", _store: dict | None = None, _live: dict | None = None) -> None:
        super().__init__(prefix=prefix, _store=_store)
        self.live: dict[str, Tensor] = {} if _live is None else _live

    def at(self, name: str) -> GradTrace:
        return GradTrace(prefix=f"{self.prefix}{name}.", _store=self.tensors, _live=self.live)

    def __call__(self, step: str, x: Tensor) -> Tensor:
        x = super().__call__(step, x)
        if x.requires_grad:
            x.retain_grad()
            self.live[self.prefix + step] = x
        return x


@dataclass
class BackwardTrace:
    """The loss, ``∂L/∂step`` for each step (from the loss back to the embeddings), each parameter's
    gradient, the hand-derived checks and the gradient × input attribution per token."""

    forward: ForwardTrace
    loss: float
    target: str
    grads: dict[str, Tensor]
    params: dict[str, Tensor]
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    attribution: list[float] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)  # the positions whose prediction the loss scores

    def to_json(self, digits: int = 6) -> dict[str, Any]:
        """JSON-ready: each step's gradient to about ``digits`` significant digits of its largest entry
        (gradients are small: a fixed number of decimals would round them away)."""

        def values(t: Tensor) -> Any:  # noqa: ANN401
            if t.numel() > MAX_SHOWN:
                return None
            largest = float(t.abs().max()) if t.numel() else 0.0
            scale = 10.0 ** (digits - math.ceil(math.log10(largest))) if largest > 0 else 1.0
            return (t.double() * scale).round().div(scale).tolist()

        return {
            "family": self.forward.family,
            "tokens": self.forward.tokens,
            "source_tokens": self.forward.source_tokens,
            "loss": self.loss,
            "target": self.target,
            "steps": [
                {
                    "name": n,
                    "shape": list(g.shape),
                    "norm": float(g.norm()),
                    "values": values(g),
                    **self.checks.get(n, {}),
                }
                for n, g in self.grads.items()
            ],
            "parameters": [
                {"name": n, "shape": list(g.shape), "norm": float(g.norm()), **self.checks.get(f"param:{n}", {})}
                for n, g in self.params.items()
            ],
            "attribution": self.attribution,
        }


def trace_backward(
    run: Any,  # noqa: ANN401 - a pipeline.Run
    text: str,
    *,
    target: str | None = None,
    position: int | None = None,
) -> BackwardTrace:
    """Backpropagate one example's loss through ``run``'s model. A generator reads ``text`` and predicts
    each next token of it (the mean loss over its positions, as in training, or the loss at ``position``
    alone); a classifier's ``target`` is a class name (default: its own prediction); a translator's
    ``target`` is the reference translation (default: its greedy translation)."""
    model = run.model
    trace = GradTrace()
    model.zero_grad(set_to_none=True)
    try:
        with torch.enable_grad():
            forward, logits = _traced(run, text, target, trace)
            trace.live["logits"] = logits
            logits.retain_grad()
            loss, what, labels, rows = _loss(run, forward, logits, target, position)
            loss.backward()
        live = {n: t for n, t in trace.live.items() if t.grad is not None}
        grads = {
            n: _unbatched(t.grad) for n, t in reversed(list(live.items())) if t.grad is not None
        }  # the loss back to the embeddings
        params = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    finally:
        model.zero_grad(set_to_none=True)
    result = BackwardTrace(forward, loss.item(), what, grads, params, rows=rows.tolist())
    result.checks = hand_checks(run, forward, grads, params, logits.detach(), labels, rows)
    result.attribution = _attribution(forward, grads)
    return result


def _unbatched(t: Tensor) -> Tensor:
    return t[0].detach() if t.dim() > 1 and t.shape[0] == 1 else t.detach()


def _loss(run: Any, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None):  # noqa: ANN401, ANN202
    """The loss, a sentence saying what it scores, its labels and the logits' rows it reads (for the
    hand-derived check): the family's (``Inspection.loss``)."""
    score = inspection(run, "backpropagated").loss
    if score is None:
        raise ValueError(f"no backward trace is known for a {run.config.family} run")
    return score(run, forward, logits, target, position)


def generator_loss(run: Any, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None):  # noqa: ANN401, ANN202
    """Each next token of the text (as in training), or the one after ``position`` alone."""
    ids = forward["tokens"]  # (T,)
    if len(ids) < 2:
        raise ValueError("text: give at least two tokens (the model predicts each next one)")
    rows = torch.arange(len(ids) - 1)  # position t predicts token t + 1
    if position is not None:
        if not 0 <= position < len(rows):
            raise ValueError(f"position {position} is out of range: the text predicts at positions 0..{len(rows) - 1}")
        rows = rows[position : position + 1]
        what = f"cross-entropy of the next token {forward.tokens[position + 1]!r} at position {position}"
    else:
        what = f"mean cross-entropy of each next token over {len(rows)} positions (as in training)"
    y = ids[rows + 1]
    return F.cross_entropy(logits[0, rows].float(), y), what, y, rows


def classifier_loss(run: Any, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None):  # noqa: ANN401, ANN202
    """The class ``target`` (by default the predicted one). An ensemble's logits are the log of its
    members' mean probability, so its cross-entropy is that of the mean."""
    classes = forward.classes
    if target is None:
        label = int(forward["probabilities"].argmax())
        what = f"cross-entropy of the class the model predicts, {classes[label]!r}"
    elif target in classes:
        label = classes.index(target)
        what = f"cross-entropy of the class {target!r}"
    else:
        raise ValueError(f"target {target!r} is not one of the run's classes: {', '.join(classes)}")
    y, rows = torch.tensor([label]), torch.tensor([0])
    if logits.shape[-1] == 1:
        return F.binary_cross_entropy_with_logits(logits[:, 0].float(), y.float()), what, y, rows
    return F.cross_entropy(logits.float(), y), what, y, rows


def translator_loss(run: Any, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None):  # noqa: ANN401, ANN202
    """Each target token and the end of the sentence, teacher-forced."""
    tgt = forward["decoder.tokens"]  # (T,): BOS + target
    y = torch.tensor([*tgt[1:].tolist(), run.tokenizer.eos_id])  # each next target token, then EOS
    what = "mean cross-entropy of each target token and the end of the sentence"
    return F.cross_entropy(logits[0].float(), y), what, y, torch.arange(len(y))


def hand_checks(
    run: Any,  # noqa: ANN401
    forward: ForwardTrace,
    grads: dict[str, Tensor],
    params: dict[str, Tensor],
    logits: Tensor,
    labels: Tensor | None,
    rows: Tensor | None,
) -> dict[str, dict[str, Any]]:
    """``{step: {"rule", "hand_max_diff"}}``: each step whose gradient the posts' hand-derived rules
    give from the step after it, with the largest difference to autograd's."""
    checks: dict[str, dict[str, Any]] = {}

    def check(name: str, rule: str, hand: Tensor) -> None:
        mine = grads.get(name) if not name.startswith("param:") else params.get(name[6:])
        if mine is not None and hand.shape == mine.shape:
            checks[name] = {"rule": rule, "hand_max_diff": float((hand - mine).abs().max())}

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
                module = model.get_submodule(norm)
                gain, bias = module.weight.detach(), module.bias.detach()
                _, cache = layer_norm_forward(forward[name].float(), gain, bias, module.eps)
                rule = "layer norm: inv·(∂x̂ - mean ∂x̂ - x̂·mean(∂x̂ ⊙ x̂))"
                check(name, rule, layer_norm_backward(grads[norm], cache)[0])
    for name in ("input", "encoder.input", "members.0.encoder.input"):  # input = embedding + position (+ pairs)
        scope = name[: -len("input")]
        if name in grads:
            for part in ("embedding", "position", "pairs"):
                check(scope + part, "input sum: ∂(each term) = ∂(input)", grads[name])
    inspection(run).checks(check, run, forward, grads, params)
    return checks


def generator_checks(check: Any, run: Any, forward: ForwardTrace, grads: dict, params: dict) -> None:  # noqa: ANN401
    """The generator's head without a final norm (``logits = x Wᵀ + b``), its embedding table and its
    learned position table."""
    cfg, model = run.config, run.model
    if not cfg.final_norm and "logits" in grads:
        last = [n for n in forward.names() if n.endswith("_residual.norm") or n == "input"][-1]
        _dense(check, model, grads, "logits", last, "head")
    classifier_checks(check, run, forward, grads, params)
    if cfg.position == "learned" and "position" in grads:
        hand = torch.zeros_like(params["position_embedding.weight"])
        hand[: len(grads["position"])] = grads["position"]  # row t of the table is added at position t
        check("param:position_embedding.weight", "learned positions: ∂(row t) = ∂(position t)", hand)


def classifier_checks(check: Any, run: Any, forward: ForwardTrace, grads: dict, params: dict) -> None:  # noqa: ANN401
    """An embedding table not tied to the output layer: the scatter-add of the rows' gradients."""
    if getattr(run.config, "tie_embeddings", False):
        return
    for name in forward.names():
        table, ids = name + ".weight", forward.tensors.get(name[: -len("embedding")] + "tokens")
        if name.endswith("embedding") and name in grads and ids is not None and table in params:
            hand = torch.zeros_like(params[table]).index_add_(0, ids, grads[name].float())
            check("param:" + table, "embedding: scatter-add of ∂(rows) by token id", hand)


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
    """Post-norm blocks: the block's input ``x`` feeds Q, K, V and the residual sum, so
    ``∂x = [∂Q ∂K ∂V] (merged) · W_qkv + ∂(sum)``; and a ReLU feed-forward's input ``n`` (the first
    norm) gets ``∂n = (∂h ⊙ [h > 0]) · W1 + ∂(second sum)``."""
    if cfg.norm_first or getattr(cfg, "position", "") == "rope":
        return
    names = forward.names()
    block = s[: -len("attention.")]
    into = names[names.index(s + "q") - 1]  # the step just before Q: the block's input
    parts = [grads[s + n] for n in ("q", "k", "v") if s + n in grads]
    if into in grads and len(parts) == 3 and block + "attention_residual.sum" in grads:
        merged = torch.cat([p.transpose(0, 1).reshape(p.shape[1], -1) for p in parts], -1)  # (T, 3C)
        weight = model.get_submodule(s + "qkv").weight.detach()  # (3C, C)
        if into.endswith(("input", "_residual.norm")) and merged.shape[-1] == weight.shape[0]:
            hand = merged @ weight + grads[block + "attention_residual.sum"]
            check(into, "block input: [∂Q ∂K ∂V] · W_qkv + ∂(residual sum)", hand)
    hidden, norm = block + "feed_forward.hidden", block + "attention_residual.norm"
    if cfg.activation == "relu" and hidden in grads and norm in grads and block + "feed_forward_residual.sum" in grads:
        weight = model.get_submodule(block + "feed_forward.dense1").weight.detach()  # (H, C)
        pre = grads[hidden] * (forward[hidden] > 0)  # ReLU: the gradient passes where the unit fired
        check(
            norm,
            "feed-forward input: (∂h ⊙ [h > 0]) · W1 + ∂(residual sum)",
            pre @ weight + grads[block + "feed_forward_residual.sum"],
        )


def _attribution(forward: ForwardTrace, grads: dict[str, Tensor]) -> list[float]:
    """Gradient × input per token: ``Σ_c ∂L/∂e[t, c] · e[t, c]`` over each token's embedding row
    (positive: the token's embedding pushed the loss up)."""
    name = next((n for n in forward.names() if n.endswith("embedding") and n in grads and "decoder" not in n), None)
    if name is None:
        return []
    return [round(float(x), 6) for x in (grads[name] * forward[name]).sum(-1).tolist()]

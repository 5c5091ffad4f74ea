"""The backward pass of one example, step by step: the loss and, for every named step of the forward
trace (``inspect.forward``), the gradient of the loss with respect to it, from the logits back to the
embedding rows; the gradient of every parameter; and, where the posts derive the step's backward by
hand (``backprop.rules``), that hand-derived gradient beside autograd's with their largest difference.

The forward runs through the model's own code with a trace that keeps each step's tensor as the forward
used it, and autograd hands back the gradient of the loss with respect to each of them and to every
parameter (``torch.autograd.grad``): nothing is re-implemented, and nothing is written to the model
(not even ``.grad``), so several requests may backpropagate through one model at once. Shapes are
the forward trace's, without the batch: a step ``(T, C)`` has a gradient ``(T, C)``; the posts write
both column-major, ``(C, T)``.

The hand-derived rules, one per kind of step: ``backprop.rules``; which step gets one from which:
``backprop.driver``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..backprop.driver import hand_gradients
from ..backprop.rules import cross_entropy
from ..layers.trace import Trace
from .forward import ForwardTrace, without_batch
from .inspection import InspectedRun, Loss
from .tracing import traced

MAX_SHOWN = 16_384  # values per step in the JSON (4 heads' 64 x 64 weights); larger gradients give their norm only


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
    missing: dict[str, str] = field(default_factory=dict)  # a step's gradient without a hand rule, and why
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
                    "kind": self.forward.traced[n].step.kind,
                    "axes": self.forward.traced[n].step.to_dict()["axes"],  # "(H, T, T)", as the forward's
                    "role": self.forward.traced[n].step.role,
                    "side": self.forward.traced[n].place.side,
                    "shape": list(g.shape),
                    "norm": float(g.norm()),
                    "values": values(g),
                    **_shown(self.checks.get(n, {}), values),
                    **(
                        {} if n in self.checks else {"no_hand_rule": self.missing.get(n, "nothing it feeds has a rule")}
                    ),
                }
                for n, g in self.grads.items()
            ],
            "parameters": [
                {
                    "name": n,
                    "shape": list(g.shape),
                    "norm": float(g.norm()),
                    **_shown(self.checks.get(f"param:{n}", {})),
                }
                for n, g in self.params.items()
            ],
            "attribution": self.attribution,
        }


def _shown(check: dict[str, Any], values: Any = None) -> dict[str, Any]:  # noqa: ANN401
    """A check as JSON: its rule and difference, and its hand values (``hand_values``) where ``values``
    turns a tensor into numbers (the parameters show norms only)."""
    out = {k: v for k, v in check.items() if k != "hand"}
    if "hand" in check:
        out["hand_norm"] = float(check["hand"].norm())
        if values is not None:
            out["hand_values"] = values(check["hand"])
    return out


def trace_backward(
    run: InspectedRun,
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
    trace = Trace()
    with torch.enable_grad():  # the gradients are handed back, never left on the model: requests may share it
        forward, logits = traced(run, text, target, trace)
        loss, what, labels, rows = _loss(run, forward, logits, target, position)
        live = {n: t for n, t in reversed(trace.live.items()) if t.requires_grad}  # from the loss back
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        found = torch.autograd.grad(loss, [*live.values(), *(p for _, p in named)], allow_unused=True)
    grads = {n: g.detach() for n, g in zip(live, found) if g is not None}
    params = {n: g.detach() for (n, _), g in zip(named, found[len(live) :]) if g is not None}
    parameters = {id(p): n for n, p in model.named_parameters()}
    hand = hand_gradients(trace, grads, params, parameters)
    hand.checks["logits"] = _loss_check(logits.detach(), labels, rows, grads["logits"])
    steps = {n: trace.step(n) for n in grads}
    shown = {n: without_batch(steps[n], g) for n, g in grads.items()}
    result = BackwardTrace(forward, loss.item(), what, shown, params, rows=rows.tolist())
    result.checks = {
        n: c | {"hand": without_batch(steps[n], c["hand"])} if n in steps else c for n, c in hand.checks.items()
    }
    result.missing = hand.missing
    result.attribution = _attribution(forward, result.grads)
    return result


def _loss_check(logits: Tensor, labels: Tensor, rows: Tensor, mine: Tensor) -> dict[str, Any]:
    """The loss's own rule at the logits it scores (``rows`` of a sequence's ``(1, T, V)``, or ``(1, K)``)."""
    flat = (logits[0] if logits.dim() == 3 else logits).float()  # (T, V) or (1, K)
    hand = torch.zeros_like(flat)
    hand[rows] = cross_entropy(flat[rows], labels)
    hand = hand.reshape(mine.shape)
    rule = "loss: (softmax(z) − onehot(y)) / N" if flat.shape[-1] > 1 else "loss: σ(z) − y"
    return {
        "rule": rule,
        "kinds": ["loss"],
        "from": [],
        "hand_max_diff": float((hand - mine).abs().max()),
        "hand": hand,
    }


def _loss(run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None) -> Loss:
    """The loss, a sentence saying what it scores, its labels and the logits' rows it reads (for the
    hand-derived check): the family's (``Inspection.loss``)."""
    return run.family.loss(run, forward, logits, target, position)


def generator_loss(
    run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None
) -> Loss:
    """Each next token of the text (as in training), or the one after ``position`` alone."""
    ids = forward["tokens"]  # (T,)
    if len(ids) < 2:
        raise ValueError("text: give at least two tokens (the model predicts each next one)")
    rows = torch.arange(len(ids) - 1)  # position t predicts token t + 1; the last predicts nothing read
    if position is not None:
        if position < 0:
            raise ValueError(f"position must be 0 or more (a position that predicts a token read), got {position}")
        position = forward.position(position, len(rows))
        rows = rows[position : position + 1]
        what = (
            f"cross-entropy of the next token {forward.tokens[position + 1]!r} at position {position}"
            + forward.where(position)
        )
    else:
        what = f"mean cross-entropy of each next token over {len(rows)} positions (as in training)"
    y = ids[rows + 1]
    return F.cross_entropy(logits[0, rows].float(), y), what, y, rows


def classifier_loss(
    run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None
) -> Loss:
    """The class ``target`` (by default the predicted one). An ensemble's logits are the log of its
    members' mean probability, so its cross-entropy is that of the mean."""
    _no_position(run, position, "the class of the whole text")
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


def translator_loss(
    run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None
) -> Loss:
    """Each target token and the end of the sentence, teacher-forced."""
    _no_position(run, position, "every token of the target")
    tgt = forward[forward.find(kind="tokens", side="target")[0]]  # (T,): BOS + target
    y = torch.tensor([*tgt[1:].tolist(), run.tokenizer.eos_id])  # each next target token, then EOS
    words = run.tokenizer.decode(tgt[1:].tolist()) or " ".join(forward.tokens[1:]) or "(nothing)"
    whose = "its own greedy translation" if target is None else "the given target"
    what = f"mean cross-entropy of each token of {whose}, {words!r}, and of the end of the sentence"
    return F.cross_entropy(logits[0].float(), y), what, y, torch.arange(len(y))


def _no_position(run: InspectedRun, position: int | None, scored: str) -> None:
    """A loss without positions refuses one, rather than scoring something else than asked."""
    if position is not None:
        raise ValueError(
            f"position {position}: a {run.config.family}'s loss scores {scored}, at no one position; only a "
            "generator's loss is taken at a position"
        )


def _attribution(forward: ForwardTrace, grads: dict[str, Tensor]) -> list[float]:
    """Gradient × input per token: ``Σ_c ∂L/∂e[t, c] · e[t, c]`` over each token's embedding row
    (positive: the token's embedding pushed the loss up)."""
    name = next((n for n in forward.of_kind("embedding") if n in grads), None)  # the first table: the source's
    if name is None:
        return []
    return [round(float(x), 6) for x in (grads[name] * forward[name]).sum(-1).tolist()]

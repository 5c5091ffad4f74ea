"""Hand-derived gradients of every step and parameter of one traced forward, from the rules of their kinds.

Each step of a trace knows what it read (``Trace.inputs_of``). The gradient of the loss with respect to
a tensor is the sum, over the steps that read it, of what each step's rule (``rules.rule_of``, chosen by
the step's kind) gives it from *that* step's gradient (autograd's, so every rule is checked on its own,
one step back). A tensor is checked when every step that read it has a rule that gives it a gradient;
otherwise the step that has none is named (``missing``), never guessed around.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torch import Tensor

from ..layers.trace import Trace
from .rules import rule_of


@dataclass
class HandGradients:
    """``checks``: per step name (a parameter as ``param:NAME``): ``rule`` (each reader's kind and formula),
    ``kinds``, ``from`` (the steps that read it), ``hand`` (batched, as the trace's tensors) and
    ``hand_max_diff`` (to autograd's). ``missing``: per tensor with a gradient but no hand value, why."""

    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def hand_gradients(
    trace: Trace,
    grads: Mapping[str, Tensor],
    param_grads: Mapping[str, Tensor],
    parameters: Mapping[int, str],
) -> HandGradients:
    """The hand-derived gradient of each step and parameter of ``trace`` from autograd's ``grads`` of the
    steps that read it (batched, by step name), compared with autograd's own (``grads``; ``param_grads``
    by parameter name, ``parameters`` maps ``id`` to name)."""
    hand: dict[str, Tensor] = {}
    formulas: dict[str, list[tuple[str, str]]] = {}  # per tensor: (kind, formula) of each step that read it
    readers: dict[str, list[str]] = {}
    out = HandGradients()
    for name, record in trace.records.items():
        reads = [step or _param(t, parameters) for t, step in zip(record.inputs, record.read_steps)]
        for r in reads:
            if r is not None:
                readers.setdefault(r, []).append(name)
        dy = grads.get(name)
        if dy is None:  # no gradient reached this step: it passes none back
            continue
        kind = record.step.kind
        rule = rule_of(kind)
        if rule is None:
            for r in reads:
                if r is not None:
                    out.missing.setdefault(r, f"{name} ({kind}) has no hand rule")
            continue
        inputs = [None if t is None else t.detach() for t in record.inputs]
        given = rule(record.step, trace.live[name].detach(), dy.detach(), inputs)
        for r, g in zip(reads, given):
            if r is None:
                continue
            if g is None:
                out.missing.setdefault(r, f"the rule of {name} ({kind}) gives it none")
                continue
            hand[r] = hand[r] + g[0] if r in hand else g[0]
            formulas.setdefault(r, []).append((kind, g[1]))
    for r, value in hand.items():
        mine = param_grads.get(r[6:]) if r.startswith("param:") else grads.get(r)
        if r in out.missing or mine is None or mine.shape != value.shape:
            continue
        out.checks[r] = {
            "rule": " + ".join(dict.fromkeys(f"{kind}: {formula}" for kind, formula in formulas[r])),
            "kinds": list(dict.fromkeys(kind for kind, _ in formulas[r])),
            "from": readers[r],
            "hand_max_diff": float((value - mine).abs().max()),
            "hand": value,
        }
    return out


def _param(t: Tensor | None, parameters: Mapping[int, str]) -> str | None:
    """``param:NAME`` for a parameter of the model, ``None`` for a constant or an absent bias."""
    name = None if t is None else parameters.get(id(t))
    return None if name is None else f"param:{name}"

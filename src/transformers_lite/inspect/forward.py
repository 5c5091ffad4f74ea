"""One forward pass of a run, step by step (``ForwardTrace``): every intermediate tensor of the posts'
equations, with its shape and what its layer declared of it: its kind, its equation (ours and the
posts'), what it means, where it sits and what it was computed from. ``tracing`` makes one.

Shapes drop the batch of one: T tokens (a translator's targets), S keys (source tokens for
cross-attention, else T), C channels, H heads, D = C / H, F feed-forward width, V vocabulary,
K classes. We are row-major ``(T, C)``; the posts are column-major, so each of their shapes is ours
read backwards (``(C, T)``, and ``Kᵀ Q`` of shape ``(S, T)`` where we compute ``Q Kᵀ`` ``(T, S)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from ..evaluation.prediction import probabilities
from ..layers.steps import Step
from ..layers.trace import NamedSteps, Place, Trace

MAX_TOKENS = 512  # the longest input a trace reads (each block keeps several (H, T, T) tensors)


@dataclass(frozen=True)
class TracedStep:
    """What a trace knows of one step besides its tensor: its declaration, its name in its layer, where it
    sits, and what it read: other steps and the model's parameters, by name."""

    step: Step
    own: str
    place: Place = Place()
    reads: tuple[str, ...] = ()
    parameters: tuple[str, ...] = ()


@dataclass
class ForwardTrace(NamedSteps):
    """Every step of one forward pass. ``tensors`` maps each step's full name (``blocks.0.attention.q``)
    to its tensor without the batch dimension; ``traced`` says what each step is (``TracedStep``);
    ``tokens`` are the tokens the steps' T axis runs over (a translator's target tokens, its source
    tokens in ``source_tokens``)."""

    family: str
    tokens: list[str]
    tensors: dict[str, Tensor]
    traced: dict[str, TracedStep] = field(default_factory=dict)
    source_tokens: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # where the model read less than the text (its context)
    cut: tuple[int, str] | None = None  # (the text's tokens, "first" or "last") when the model read fewer

    def position(self, position: int, count: int | None = None) -> int:
        """``position`` (negative: from the end) as an index among the first ``count`` of the tokens the
        model read (default: all of them): the one place a position asked of a trace is checked. One
        outside them is a ``ValueError`` saying how many the model reads, and, when the text was longer
        than its context, which of the text's tokens those are (positions count what the model reads)."""
        count = len(self.tokens) if count is None else count
        if isinstance(position, bool) or not isinstance(position, int):
            raise ValueError(f"position must be an integer, got {position!r}")
        if -count <= position < count:
            return position % count
        span = f"0..{count - 1}" if count else "none"
        text = f"position {position} is outside the positions the model reads ({span})"
        if self.cut is not None:
            given, which = self.cut
            first = given - len(self.tokens) if which == "last" else 0
            text += (
                f": the text has {given:,} tokens and the model reads only its {which} {len(self.tokens):,} (its "
                f"context), the text's tokens {first:,}..{first + len(self.tokens) - 1:,}, numbered from 0"
            )
        raise ValueError(text)

    def where(self, position: int) -> str:
        """Where ``position`` (an index of the tokens read) sits in the text, when the model read part of it."""
        if self.cut is None:
            return ""
        given, which = self.cut
        first = given - len(self.tokens) if which == "last" else 0
        return (
            f" (the text's token {first + position:,} of {given:,}: the model reads its {which} {len(self.tokens):,})"
        )

    def of_kind(self, kind: str) -> list[str]:
        """The steps of ``kind`` (``layers.steps.KINDS``), in forward order."""
        return [n for n, t in self.traced.items() if t.step.kind == kind]

    def declared(self) -> Iterator[tuple[str, Step, Place]]:
        return ((n, t.step, t.place) for n, t in self.traced.items())

    def blocks(self) -> list[str]:
        """The blocks in forward order: ``blocks.0``, ``encoder.blocks.1``, ``decoder.blocks.0``, ..."""
        return list(dict.fromkeys(t.place.block for t in self.traced.values() if t.place.block))

    def readers(self, name: str) -> list[str]:
        """The steps computed from step ``name``."""
        return [n for n, t in self.traced.items() if name in t.reads]

    def select(self, block: str | None = None) -> list[str]:
        """The steps outside every block, and those of ``block`` (every step when ``None``); for a block of
        an ensemble's member, the steps outside blocks of that member only."""
        if block is None:
            return self.names()
        places = {n: t.place for n, t in self.traced.items()}
        member = next((p.member for p in places.values() if p.block == block), None)
        if not block or member is None:
            if block:
                raise ValueError(f"block {block!r}: this model's blocks are {', '.join(self.blocks())}")
            member = ""
        return [
            n
            for n, p in places.items()
            if p.block == block or (not p.block and (not member or not p.member or p.member == member))
        ]

    def steps(self, block: str | None = None) -> list[dict[str, Any]]:
        """Name, kind, shape (ours and the posts'), equation and meaning of each step (``select(block)``),
        as the layer that computed it declared them, and the steps and parameters it read."""
        out = []
        for name in self.select(block):
            traced = self.traced[name]
            out.append(
                {"name": name, "shape": list(self.tensors[name].shape)}
                | traced.step.to_dict()
                | {"scope": traced.place.scope, "block": traced.place.block, "side": traced.place.side}
                | {"reads": list(traced.reads), "parameters": list(traced.parameters)}
            )
        return out

    def to_json(
        self, block: str | None = None, digits: int = 5, top: int = 10, full_vocabulary: int = 128
    ) -> dict[str, Any]:
        """The trace as JSON-ready data: tokens, the blocks, and each step (``select(block)``) with its
        values rounded to ``digits``. A step over a vocabulary larger than ``full_vocabulary`` (a translator's
        logits) keeps, per position, its ``top`` entries as ``{"id", "value"}`` instead of every value."""
        steps = self.steps(block)
        for step in steps:
            t = self.tensors[step["name"]]
            if not t.is_floating_point():
                step["values"] = t.int().tolist()
            elif self.traced[step["name"]].step.axes[-1:] == "V" and t.shape[-1] > full_vocabulary:
                best = torch.topk(t.float(), min(top, t.shape[-1]), dim=-1)
                step["top"] = [
                    [{"id": i, "value": round(v, digits)} for i, v in zip(ids, values)]
                    for ids, values in zip(best.indices.tolist(), best.values.tolist())
                ]
            else:
                step["values"] = rounded(t, digits)
        return {
            "family": self.family,
            "tokens": self.tokens,
            "source_tokens": self.source_tokens,
            "classes": self.classes,
            "blocks": self.blocks(),
            "outline": self.outline(),
            "steps": steps,
        }

    def outline(self) -> list[dict[str, Any]]:
        """Every step in forward order, by name, kind, place and shape (no values): the model's map, as
        this model computed it (its blocks, and in each the sub-layers in the order they ran)."""
        return [
            {"name": name, "kind": t.step.kind, "role": t.step.role, "scope": t.place.scope, "block": t.place.block}
            | {"member": t.place.member, "side": t.place.side, "shape": list(self.tensors[name].shape)}
            for name, t in self.traced.items()
        ]


def rounded(t: Tensor, digits: int) -> list:
    """``t``'s values rounded to ``digits`` decimals as nested lists; −∞ (a mask, or masked scores: the
    lowest float) is ``None``, as JSON has no infinity."""
    hidden = t.isneginf() | (t <= torch.finfo(t.dtype).min)
    scale = 10.0**digits
    values = (t.double() * scale).round().div(scale).nan_to_num(0.0, posinf=0.0, neginf=0.0)
    if not hidden.any():
        return values.tolist()
    flat = [None if h else v for v, h in zip(values.flatten().tolist(), hidden.flatten().tolist())]
    for size in reversed(values.shape[1:]):  # nested back into the tensor's shape, innermost first
        flat = [flat[i : i + size] for i in range(0, len(flat), size)]
    return flat


PROBABILITIES = {  # what the inspector adds after the model's logits
    "sequence": Step(
        "softmax", "TV", "p = softmax(z) over the vocabulary", "softmax(z)", "the model's prediction of the next token"
    ),
    "classes": Step(
        "softmax", "K", "p = softmax(z) (one logit: [1 − σ(z), σ(z)])", "softmax(z)", "the probability of each class"
    ),
}


def without_batch(step: Step, t: Tensor) -> Tensor:
    """A step's tensor (or its gradient) without its batch of one: a position table has none, it has as
    many axes as its step declares."""
    return t[0] if t.dim() > len(step.axes) else t


def collect(model: nn.Module, trace: Trace, logits: Tensor) -> dict[str, Any]:
    """The fields of a ``ForwardTrace`` of ``model``'s forward: the trace's tensors without the batch,
    what each step is (its parameters named as ``model`` names them), the probabilities added."""
    tensors = {name: without_batch(trace.step(name), t) for name, t in trace.tensors.items()}
    names = {id(p): n for n, p in model.named_parameters()}
    traced = {
        name: TracedStep(r.step, r.own, r.place, *trace.inputs_of(name, names)) for name, r in trace.records.items()
    }
    which = "classes" if logits.dim() == 2 else "sequence"  # a classifier's (1, K); one logit is [1 - p, p]
    if logits.dim() == 2:
        tensors["probabilities"] = probabilities(logits.detach())[0]
    else:
        tensors["probabilities"] = torch.softmax(logits[0].detach().float(), dim=-1)
    traced["probabilities"] = TracedStep(PROBABILITIES[which], "probabilities", reads=("logits",))
    return {"tensors": tensors, "traced": traced}

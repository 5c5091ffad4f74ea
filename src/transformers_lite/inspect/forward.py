"""One forward pass of a run, step by step: every intermediate tensor of the posts' equations, with its
shape, its equation (ours and the posts') and what it means.

The tensors come from the model's own forward through a ``Trace`` (``layers.trace``): nothing is
computed twice, and the traced logits are the logits (a test checks them bit for bit). ``edits`` change
a step on its way (switch off a head, scale a neuron, drop the positions) through the same forward.

Shapes drop the batch of one: T tokens (a translator's targets), S keys (source tokens for
cross-attention, else T), C channels, H heads, D = C / H, F feed-forward width, V vocabulary,
K classes. We are row-major ``(T, C)``; the posts are column-major, so each of their shapes is ours
read backwards (``(C, T)``, and ``Kᵀ Q`` of shape ``(S, T)`` where we compute ``Q Kᵀ`` ``(T, S)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from ..evaluation.prediction import class_names, encode_for_classifier, probabilities
from ..generation.prompt import read_prompt
from ..generation.translate import DecodeSettings, decode_batch, encode_source
from ..layers import padding_mask_from_ids
from ..layers.steps import Step
from ..layers.trace import Edit, NamedSteps, Place, Trace
from .inspection import inspection

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

    def of_kind(self, kind: str) -> list[str]:
        """The steps of ``kind`` (``layers.steps.KINDS``), in forward order."""
        return [n for n, t in self.traced.items() if t.step.kind == kind]

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
                | {"scope": traced.place.scope, "block": traced.place.block}
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
            "steps": steps,
        }


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


def _collect(run: Any, trace: Trace, logits: Tensor) -> dict[str, Any]:  # noqa: ANN401
    """The trace's tensors without the batch, what each step is, the probabilities added."""
    tensors = {name: without_batch(trace.step(name), t) for name, t in trace.tensors.items()}
    names = {id(p): n for n, p in run.model.named_parameters()}
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


@torch.no_grad()
def trace_forward(
    run: Any,  # noqa: ANN401 - a pipeline.Run
    text: str,
    *,
    target: str | None = None,
    edits: dict[str, Edit] | None = None,
) -> ForwardTrace:
    """The forward pass of ``run``'s model over ``text`` (a generator's prompt, a review, a translator's
    source; ``target`` is a translator's target, by default its greedy translation), every step recorded.
    ``edits`` maps step names to functions applied to that step on the way; a name the forward never
    computes is an error."""
    trace = Trace(edits)
    result, _ = _traced(run, text, target, trace)
    _check_edits(trace, edits)
    return result


def _traced(run: Any, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:  # noqa: ANN401
    """The forward trace and the model's output itself (still in the graph when gradients are on)."""
    if not isinstance(text, str) or not text:
        raise ValueError("text: give a non-empty string to trace")
    read = inspection(run, "traced").trace
    run.model.eval()
    return read(run, text, target, trace)


def trace_generator(run: Any, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:  # noqa: ANN401
    """A generator reads the prompt's last tokens (up to its context) and predicts each next one."""
    every = read_prompt(run.tokenizer, text).ids
    ids = torch.tensor(every[-min(run.config.max_length, MAX_TOKENS) :])  # (T,)
    logits = run.model(ids[None], trace=trace)  # (1, T, V)
    tokens = [run.tokenizer.shown(i) for i in ids.tolist()]
    return ForwardTrace(
        run.config.family, tokens, **_collect(run, trace, logits), notes=_cut(len(ids), len(every), "last")
    ), logits


def _cut(read: int, given: int, which: str) -> list[str]:
    """The note when the model reads only ``read`` of the text's ``given`` tokens."""
    return (
        [f"the model reads the {which} {read:,} of the text's {given:,} tokens (its context)"] if read < given else []
    )


def trace_classifier(run: Any, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:  # noqa: ANN401
    """A classifier reads the text as in training (cut to its length, padded if it pads) and scores the classes."""
    return _trace_encoder(run, text, trace, class_names(run.config))


def trace_encoder(run: Any, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:  # noqa: ANN401
    """A pretrained encoder reads the text as a classifier does and predicts a word at each position."""
    return _trace_encoder(run, text, trace, [])


def _trace_encoder(run: Any, text: str, trace: Trace, classes: list[str]) -> tuple[ForwardTrace, Tensor]:  # noqa: ANN401
    cfg = run.config
    limit = min(cfg.max_length, MAX_TOKENS)
    ids, valid = encode_for_classifier(run.tokenizer, [text], limit, getattr(cfg, "pads_to_length", False))  # (1, T)
    if not valid.any():
        raise ValueError("text: no word the model knows; it reads as empty")
    logits = run.model(ids, valid, trace=trace)  # (1, K) or (1, T, V)
    tokens = [run.tokenizer.shown(i) for i in ids[0].tolist()]
    notes = _cut(int(valid.sum()), len(run.tokenizer.encode(text)), "first")
    unknown = int(((ids[0] == run.tokenizer.unk_id) & valid[0]).sum()) if run.tokenizer.unk_id is not None else 0
    if unknown:
        notes.append(
            f"{unknown} word{'s' if unknown > 1 else ''} of the text {'are' if unknown > 1 else 'is'} not in the "
            f"model's vocabulary and read{'' if unknown > 1 else 's'} as {run.tokenizer.shown(run.tokenizer.unk_id)}"
        )
    return ForwardTrace(cfg.family, tokens, **_collect(run, trace, logits), classes=classes, notes=notes), logits


def trace_translator(run: Any, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:  # noqa: ANN401
    """A translator encodes the source and decodes ``target`` (by default its greedy translation),
    teacher-forced: the decoder reads BOS and the target, and predicts each next target token."""
    cfg, src_tok, tgt_tok = run.config, run.src_tokenizer, run.tokenizer
    src = torch.tensor(encode_source(src_tok, text, cfg.max_length))  # (S,)
    if target is None:
        out = decode_batch(run.model, src[None], tgt_tok.bos_id, tgt_tok.eos_id, DecodeSettings())[0]
        out = [i for i in out if i not in (tgt_tok.bos_id, cfg.pad_id)]  # as its text reads: a target given as text
    else:
        out = tgt_tok.encode(target)[: cfg.max_length - 1]
    tgt = torch.tensor([tgt_tok.bos_id, *out])  # (T,): the decoder's input, shifted right
    src_valid = padding_mask_from_ids(src, cfg.pad_id)
    logits = run.model(src[None], tgt[None], src_valid[None], trace=trace)  # (1, T, V)
    found = ForwardTrace(
        cfg.family,
        [tgt_tok.shown(i) for i in tgt.tolist()],
        **_collect(run, trace, logits),
        source_tokens=[src_tok.shown(i) for i in src.tolist()],
        notes=_cut(len(src) - 1, len(src_tok.encode(text)), "first"),
    )
    if target is None and not out:
        found.notes.append(
            "the model's own translation is empty (an untrained model often ends at once): give a target, "
            "such as the reference translation, to see the decoder work on a sentence"
        )
    return found, logits


def _check_edits(trace: Trace, edits: dict[str, Edit] | None) -> None:
    owns = {r.own for r in trace.records.values()}  # an edit by a step's own name edits every step of that name
    missing = sorted(n for n in edits or () if n not in trace.tensors and n not in owns)
    if missing:
        some = ", ".join(n for n, r in trace.records.items() if r.step.kind == "weighted_sum")[:300]
        raise ValueError(f"no step named {', '.join(missing)} in this model's forward (its heads: {some})")


_HEAD = re.compile(r"^(?P<scope>.+\.(?:cross_)?attention)\.head\.(?P<head>\d+)$")


def _in_turn(first: Edit, then: Edit) -> Edit:
    return lambda t: then(first(t))


def switch_off(specs: list[str] | tuple[str, ...], n_heads: int) -> dict[str, Edit]:
    """The trace edits that switch off each of ``specs`` (several edits of one step apply in turn)."""
    edits: dict[str, Edit] = {}
    for spec in specs:
        name, edit = _switch_off_one(spec, n_heads)
        before = edits.get(name)
        edits[name] = edit if before is None else _in_turn(before, edit)
    return edits


def _switch_off_one(spec: str, n_heads: int) -> tuple[str, Edit]:
    """An edit from a short spec: ``BLOCK_SCOPE.attention.head.N`` zeroes head N's output (``heads``),
    ``NAME.unit.N`` zeroes channel N of step NAME (e.g. ``blocks.0.feed_forward.hidden.unit.7``), and
    ``position`` drops every position encoding (``encoder.position``: only that one)."""
    match = _HEAD.match(spec)
    if match:
        head = int(match["head"])
        if not 0 <= head < n_heads:
            raise ValueError(f"{spec}: head {head} is out of range: the model has {n_heads} heads")

        def zero_head(t: Tensor) -> Tensor:  # (B, H, T, D)
            t = t.clone()
            t[:, head] = 0
            return t

        return f"{match['scope']}.heads", zero_head
    name, _, unit = spec.rpartition(".unit.")
    if name.rsplit(".", 1)[-1] in ("tokens", "mask"):
        raise ValueError(
            f"{spec}: the {name} step is shown, not switched off (the forward reads the ids and mask it was given)"
        )
    if name and re.fullmatch(r"[0-9]+", unit):
        index = int(unit)

        def zero_unit(t: Tensor) -> Tensor:  # (..., F)
            if index >= t.shape[-1]:
                raise ValueError(f"{spec}: unit {index} is out of range: the step has {t.shape[-1]}")
            t = t.clone()
            t[..., index] = 0
            return t

        return name, zero_unit
    if spec.split(".")[-1] == "position":
        return spec, torch.zeros_like
    raise ValueError(
        f"{spec!r}: switch off 'blocks.I.attention.head.N', 'NAME.unit.N' (a channel of step NAME) or 'position'"
    )

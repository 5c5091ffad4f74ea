"""Tracing one input through a run's model: each family reads its input its own way (its ``Family``'s
``trace``, one of the readers here), then the model's own forward runs with a ``Trace`` and every step
is recorded (``forward.ForwardTrace``). Nothing is computed twice, and the traced logits are the logits
(a test checks them bit for bit). ``edits`` change a step on its way (switch off a head, zero a neuron,
drop the positions) through the same forward.
"""

from __future__ import annotations

import re

import torch
from torch import Tensor

from ..evaluation.prediction import class_names, encode_for_classifier
from ..generation.prompt import read_prompt
from ..generation.translate import DecodeSettings, decode_batch, encode_source
from ..layers import padding_mask_from_ids
from ..layers.trace import Edit, EditKey, Trace
from ..tokenizers.unknown import unknown_notes
from .forward import MAX_TOKENS, ForwardTrace, collect
from .inspection import InspectedRun


@torch.no_grad()
def trace_forward(
    run: InspectedRun,
    text: str,
    *,
    target: str | None = None,
    edits: dict[EditKey, Edit] | None = None,
) -> ForwardTrace:
    """The forward pass of ``run``'s model over ``text`` (a generator's prompt, a review, a translator's
    source; ``target`` is a translator's target, by default its greedy translation), every step recorded.
    ``edits`` maps step names (or a layer's scope and a step's role, ``layers.trace``) to functions applied
    to that step on the way; a name the forward never computes is an error."""
    trace = Trace(edits)
    result, _ = traced(run, text, target, trace)
    _check_edits(trace, edits)
    return result


def traced(run: InspectedRun, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:
    """The forward trace and the model's output itself (still in the graph when gradients are on)."""
    if not isinstance(text, str) or not text:
        raise ValueError("text: give a non-empty string to trace")
    run.model.eval()
    return run.family.trace(run, text, target, trace)


def trace_generator(run: InspectedRun, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:
    """A generator reads the prompt's last tokens (up to its context) and predicts each next one."""
    prompt = read_prompt(run.tokenizer, text)
    every = prompt.ids
    ids = torch.tensor(every[-min(run.config.max_length, MAX_TOKENS) :])  # (T,)
    logits = run.model(ids[None], trace=trace)  # (1, T, V)
    tokens = [run.tokenizer.shown(i) for i in ids.tolist()]
    notes = _cut(len(ids), len(every), "last") + ([prompt.notice] if prompt.notice else [])
    cut = (len(every), "last") if len(ids) < len(every) else None
    return ForwardTrace(run.config.family, tokens, **collect(run.model, trace, logits), notes=notes, cut=cut), logits


def _cut(read: int, given: int, which: str) -> list[str]:
    """The note when the model reads only ``read`` of the text's ``given`` tokens."""
    return (
        [f"the model reads the {which} {read:,} of the text's {given:,} tokens (its context)"] if read < given else []
    )


def trace_classifier(run: InspectedRun, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:
    """A classifier reads the text as in training (cut to its length, padded if it pads) and scores the classes."""
    return _trace_encoder(run, text, trace, class_names(run.config))


def trace_encoder(run: InspectedRun, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:
    """A pretrained encoder reads the text as a classifier does and predicts a word at each position."""
    return _trace_encoder(run, text, trace, [])


def _trace_encoder(run: InspectedRun, text: str, trace: Trace, classes: list[str]) -> tuple[ForwardTrace, Tensor]:
    cfg = run.config
    limit = min(cfg.max_length, MAX_TOKENS)
    ids, valid = encode_for_classifier(run.tokenizer, [text], limit, getattr(cfg, "pads_to_length", False))  # (1, T)
    if not valid.any():
        raise ValueError("text: no word the model knows; it reads as empty")
    logits = run.model(ids, valid, trace=trace)  # (1, K) or (1, T, V)
    tokens = [run.tokenizer.shown(i) for i in ids[0].tolist()]
    given = len(run.tokenizer.encode(text))
    notes = _cut(int(valid.sum()), given, "first") + unknown_notes("the text", run.tokenizer, text)
    cut = (given, "first") if int(valid.sum()) < given else None
    found = ForwardTrace(cfg.family, tokens, **collect(run.model, trace, logits), classes=classes, notes=notes, cut=cut)
    return found, logits


def trace_translator(run: InspectedRun, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:
    """A translator encodes the source and decodes ``target`` (by default its greedy translation),
    teacher-forced: the decoder reads BOS and the target, and predicts each next target token."""
    cfg, src_tok, tgt_tok = run.config, run.src_tokenizer, run.tokenizer
    src = torch.tensor(encode_source(src_tok, text, cfg.max_length))  # (S,)
    notes = unknown_notes("the source", src_tok, text) + (
        [] if target is None else unknown_notes("the target", tgt_tok, target)
    )
    if target is None:
        out = decode_batch(run.model, src[None], tgt_tok.need("bos"), tgt_tok.need("eos"), DecodeSettings())[0]
        out = [i for i in out if i not in (tgt_tok.bos_id, cfg.pad_id)]  # as its text reads: a target given as text
    else:
        out = tgt_tok.encode(target)
        notes += [f"the target: {n}" for n in _cut(cfg.max_length - 1, len(out), "first")]
        out = out[: cfg.max_length - 1]
    tgt = torch.tensor([tgt_tok.need("bos"), *out])  # (T,): the decoder's input, shifted right
    src_valid = padding_mask_from_ids(src, cfg.pad_id)
    logits = run.model(src[None], tgt[None], src_valid[None], trace=trace)  # (1, T, V)
    found = ForwardTrace(
        cfg.family,
        [tgt_tok.shown(i) for i in tgt.tolist()],
        **collect(run.model, trace, logits),
        source_tokens=[src_tok.shown(i) for i in src.tolist()],
        notes=_cut(len(src) - 1, len(src_tok.encode(text)), "first") + notes,
    )
    if target is None and not out:
        found.notes.append(
            "the model's own translation is empty (an untrained model often ends at once): give a target, "
            "such as the reference translation, to see the decoder work on a sentence"
        )
    return found, logits


def _check_edits(trace: Trace, edits: dict[EditKey, Edit] | None) -> None:
    owns = {r.own for r in trace.records.values()}  # an edit by a step's own name edits every step of that name
    played = {(r.place.scope, r.step.role) for r in trace.records.values() if r.step.role}
    missing = [key for key in edits or () if key not in trace.tensors and key not in owns and key not in played]
    if missing:
        layers = ", ".join(trace.records[n].place.scope for n in trace.find(role="heads"))[:300]
        named = sorted(key for key in missing if isinstance(key, str))
        scopes = sorted(key[0] for key in missing if isinstance(key, tuple))
        said = ([f"no step named {', '.join(named)}"] if named else []) + (
            [f"no attention layer {', '.join(scopes)}"] if scopes else []
        )
        raise ValueError(f"{'; '.join(said)} in this model's forward (its attention layers: {layers})")


_HEAD = re.compile(r"^(?P<scope>.+)\.head\.(?P<head>\d+)$")  # the attention layer's scope, as the trace names it


def _in_turn(first: Edit, then: Edit) -> Edit:
    return lambda t: then(first(t))


def switch_off(specs: list[str] | tuple[str, ...], n_heads: int) -> dict[EditKey, Edit]:
    """The trace edits that switch off each of ``specs`` (several edits of one step apply in turn)."""
    edits: dict[EditKey, Edit] = {}
    for spec in specs:
        name, edit = _switch_off_one(spec, n_heads)
        before = edits.get(name)
        edits[name] = edit if before is None else _in_turn(before, edit)
    return edits


def _switch_off_one(spec: str, n_heads: int) -> tuple[EditKey, Edit]:
    """An edit from a short spec: ``SCOPE.head.N`` zeroes head N's output in the attention layer ``SCOPE``
    (its step of role ``heads``),
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

        return (match["scope"], "heads"), zero_head
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

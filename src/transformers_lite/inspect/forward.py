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
from ..layers.trace import Edit, NamedSteps, Trace
from .inspection import inspection
from .steps import step_info

MAX_TOKENS = 512  # the longest input a trace reads (each block keeps several (H, T, T) tensors)


@dataclass
class ForwardTrace(NamedSteps):
    """Every step of one forward pass. ``tensors`` maps each step's full name (``blocks.0.attention.q``)
    to its tensor without the batch dimension; ``tokens`` are the tokens the steps' T axis runs over
    (a translator's target tokens, its source tokens in ``source_tokens``)."""

    family: str
    tokens: list[str]
    tensors: dict[str, Tensor]
    source_tokens: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # where the model read less than the text (its context)

    def blocks(self) -> list[str]:
        """The blocks in forward order: ``blocks.0``, ``encoder.blocks.1``, ``decoder.blocks.0``, ..."""
        scopes: list[str] = []
        for name in self.tensors:
            parts = name.split(".")
            if "blocks" in parts:
                scope = ".".join(parts[: parts.index("blocks") + 2])
                if scope not in scopes:
                    scopes.append(scope)
        return scopes

    def select(self, block: str | None = None) -> list[str]:
        """The steps outside every block, and those of ``block`` (every step when ``None``); for a block of
        an ensemble's member, the steps outside blocks of that member only."""
        if block is None:
            return self.names()
        if block and block not in self.blocks():
            raise ValueError(f"block {block!r}: this model's blocks are {', '.join(self.blocks())}")
        member = ".".join(block.split(".")[:2]) + "." if block.startswith("members.") else ""  # an ensemble's
        return [
            n
            for n in self.tensors
            if n.startswith(f"{block}.")
            or (".blocks." not in f".{n}" and (not member or not n.startswith("members.") or n.startswith(member)))
        ]

    def steps(self, block: str | None = None) -> list[dict[str, Any]]:
        """Name, shape (ours and the posts'), equation and meaning of each step (``select(block)``)."""
        out = []
        for name in self.select(block):
            t = self.tensors[name]
            info = step_info(name, t.dim())
            out.append(
                {
                    "name": name,
                    "shape": list(t.shape),
                    "axes": f"({', '.join(info.axes)})",
                    "post_axes": f"({', '.join(reversed(info.axes))})",
                    "equation": info.ours,
                    "post_equation": info.post,
                    "meaning": info.meaning,
                }
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
            elif step["axes"].endswith("V)") and t.shape[-1] > full_vocabulary:
                best = torch.topk(t.float(), min(top, t.shape[-1]), dim=-1)
                step["top"] = [
                    [{"id": i, "value": round(v, digits)} for i, v in zip(ids, values)]
                    for ids, values in zip(best.indices.tolist(), best.values.tolist())
                ]
            else:
                scale = 10.0**digits
                step["values"] = (t.double() * scale).round().div(scale).nan_to_num(0.0).tolist()
        return {
            "family": self.family,
            "tokens": self.tokens,
            "source_tokens": self.source_tokens,
            "classes": self.classes,
            "blocks": self.blocks(),
            "steps": steps,
        }


def _unbatched(name: str, t: Tensor) -> Tensor:
    """``t`` without its batch of one (position tables have none; a mask has one only with 4 dims)."""
    own = name.rsplit(".", 1)[-1]
    if own == "position" or (own == "mask" and t.dim() < 4) or not t.dim():
        return t
    return t[0]


def _collect(trace: Trace, logits: Tensor, before: str = "", **extra: Tensor) -> dict[str, Tensor]:
    """The trace's tensors without the batch, the probabilities added, ``extra`` placed before step ``before``."""
    tensors: dict[str, Tensor] = {}
    for name, t in trace.tensors.items():
        if name == before:
            tensors.update(extra)
        tensors[name] = _unbatched(name, t)
    tensors["logits"] = logits[0].detach()
    if logits.dim() == 2:  # a classifier's (1, K); one logit is [1 - p, p]
        tensors["probabilities"] = probabilities(logits.detach())[0]
    else:
        tensors["probabilities"] = torch.softmax(logits[0].detach().float(), dim=-1)
    return tensors | extra


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
        run.config.family, tokens, _collect(trace, logits), notes=_cut(len(ids), len(every), "last")
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
    return ForwardTrace(cfg.family, tokens, _collect(trace, logits), classes=classes, notes=notes), logits


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
        _collect(trace, logits, before="decoder.embedding", **{"decoder.tokens": tgt}),
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
    names = trace.names()
    missing = sorted(n for n in edits or () if n not in trace.tensors and not any(m.endswith(f".{n}") for m in names))
    if missing:
        some = ", ".join(n for n in names if n.endswith(".heads"))[:300]
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

"""What a forward trace says when read out: the prediction forming block by block (the "logit lens")
and how far each head looks (post 004: "most tokens only place emphasis on the four or less tokens
directly before them").

Both read a ``ForwardTrace`` (``inspect.forward``); the lens also applies the model's own output layer
(its final norm and head) to the residual stream at each block boundary.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ..data.shakespeare import split_text
from ..evaluation.evaluate import recorded_text
from ..evaluation.prediction import probabilities
from ..layers import padding_mask_from_ids
from ..layers.trace import Trace
from ..models.ensemble import classifier_members
from .forward import MAX_TOKENS, ForwardTrace
from .inspection import InspectedRun
from .tracing import switch_off, trace_forward


def block_outputs(trace: ForwardTrace, start: str) -> list[tuple[str, Tensor]]:
    """The residual stream at each block boundary, ``(T, C)`` each: the stack's input ``start`` (a step of
    kind ``sum``: ``input``, ``decoder.input``, ``members.0.encoder.input``), then each block's output,
    found by following the stream: the next block is the one whose first residual sum adds to it."""
    out = [("input", trace[start])]
    x = start
    while True:
        adds = [
            n
            for n in trace.readers(x)
            if trace.traced[n].step.kind == "residual_sum" and trace.traced[n].reads[:1] == (x,)
        ]
        if not adds:
            return out
        block = trace.traced[adds[0]].place.block
        x = [n for n, t in trace.traced.items() if t.place.block == block][-1]  # a block ends with its output
        out.append((f"after block {len(out) - 1}", trace[x]))


@torch.no_grad()
def logit_lens(run: InspectedRun, trace: ForwardTrace, position: int = -1, top: int = 5) -> list[dict[str, Any]]:
    """At each block boundary, the ``top`` predictions the model would make at ``position`` (a
    generator's or translator's next token, a masked LM's word) or for the whole input (a classifier's
    classes) if its residual stream went straight to the output layer from there. The last row is the
    model's own prediction."""
    rows = run.family.lens(run, trace, trace.position(position))
    return [_row(label, probs, trace.classes or None, top, run.tokenizer) for label, probs in rows]


def generator_lens(run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
    """The final norm and the head applied to the stream at ``position``."""
    model, start = run.model, trace.of_kind("sum")[0]
    return [(label, _softmax(model.head(model.final_norm(x[position])))) for label, x in block_outputs(trace, start)]


def translator_lens(run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
    """The decoder's final norm and the head applied to the decoder's stream at ``position``."""
    model, start = run.model, trace.of_kind("sum")[-1]  # the decoder's input: the encoder's comes first
    return [(label, _softmax(model.head(model.decoder_norm(x[position])))) for label, x in block_outputs(trace, start)]


def encoder_lens(run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
    """A masked LM's prediction head applied to the encoder's stream at ``position``."""
    model, start = run.model, trace.of_kind("sum")[0]
    return [
        (label, _softmax(model.predict(model.encoder.final_norm(x[position]))))
        for label, x in block_outputs(trace, start)
    ]


def classifier_lens(run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
    """Each member's head (pooling the whole input) applied to its stream; an ensemble's members' class
    probabilities averaged, as the ensemble does."""
    model, starts = run.model, trace.of_kind("sum")  # each member's input, in the members' order
    ids = trace[trace.of_kind("tokens")[0]]
    valid = padding_mask_from_ids(ids, run.config.pad_id)[None]  # (1, T)
    per_member = [
        [
            m.head(m.encoder.final_norm(x)[None], valid)[0]  # the final norm: Identity after post-norm blocks
            for _, x in block_outputs(trace, start)
        ]
        for m, start in zip(classifier_members(model), starts)
    ]  # members x boundaries, each (K,)
    labels = [label for label, _ in block_outputs(trace, starts[0])]
    return [
        (label, torch.stack([probabilities(p[b][None])[0] for p in per_member]).mean(0))
        for b, label in enumerate(labels)
    ]


def _softmax(logits: Tensor) -> Tensor:
    return torch.softmax(logits.float(), -1)


def _row(label: str, probs: Tensor, names: list[str] | None, top: int, tokenizer: Any = None) -> dict[str, Any]:
    best = torch.topk(probs, min(top, probs.shape[-1]))
    shown = []
    for i, p in zip(best.indices.tolist(), best.values.tolist()):
        text = names[i] if names else (tokenizer.decode([i], skip_special=False) or tokenizer.token(i))
        shown.append({"id": i, "token": text, "p": round(p, 5)})
    return {"at": label, "top": shown}


def attention_distance(trace: ForwardTrace, uniform: bool = False) -> dict[str, list[float]]:
    """Per self-attention layer, each head's mean distance in tokens between a query and the keys it
    reads: sum_j w_ij |i - j|, averaged over the queries (padding queries left out). ``uniform``: the
    baseline instead, each query spreading its attention evenly over the keys it may read (one number
    per layer: every head has the same mask), what a head that learned nothing would give."""
    out = {}
    for name in trace.find(role="weights"):  # self-attention's: queries and keys are the same tokens
        traced = trace.traced[name]
        before = trace.traced.get(traced.reads[0]) if traced.reads else None
        valid, w = None, trace[name]
        if before is not None and before.step.kind == "masked":  # M over (H, T, T): a key hidden from every query
            hidden = trace[before.reads[1]].isneginf()
            valid = ~hidden.all(0).all(0)  # is padding; queries are the same tokens
            if uniform:
                w = (~hidden[:1]).float() / (~hidden[:1]).sum(-1, keepdim=True).clamp(min=1)  # (1, T, T)
        elif uniform:
            w = torch.full_like(w[:1], 1.0 / w.shape[-1])  # (1, T, T): nothing hidden
        out[traced.place.scope] = [round(float(d), 3) for d in _distance(w, valid)]
    return out


def _distance(w: Tensor, valid: Tensor | None = None) -> Tensor:
    """``(H, T, T)`` attention weights -> ``(H,)`` mean query-to-key distance over the ``valid`` queries."""
    w = w.float()
    pos = torch.arange(w.shape[-1], dtype=torch.float32)
    distance = (pos[:, None] - pos[None, :]).abs()  # (T, S)
    per_query = (w * distance).sum(-1)  # (H, T)
    valid = torch.ones(w.shape[-2], dtype=torch.bool) if valid is None else valid
    return (per_query * valid).sum(-1) / valid.sum().clamp(min=1)


@torch.no_grad()
def validation_attention_distance(run: InspectedRun, windows: int) -> dict[str, Any]:
    """A generator's mean attention distance per head over ``windows`` full-context windows spread
    evenly over its own validation text (the measurement behind post 004's "most tokens only place
    emphasis on the four or less tokens directly before them")."""
    val, starts, t = _validation_windows(run, windows)
    totals: dict[str, Tensor] = {}
    for start in starts:
        trace = Trace()
        run.model(val[start : start + t][None], trace=trace)  # (1, T) -> logits; the weights are traced
        for name in trace.find(role="weights"):  # self-attention's weights
            scope = trace.records[name].place.scope
            totals[scope] = totals.get(scope, 0) + _distance(trace[name][0])
    return {
        "windows": len(starts),
        "context": t,
        "heads": {scope: [round(float(d / len(starts)), 3) for d in total] for scope, total in totals.items()},
    }


MAX_SWEEP_HEADS = 256  # forwards one sweep may run
MAX_WINDOWS = 10_000  # validation windows one measurement reads, a forward each


def _loss(run: InspectedRun, trace: ForwardTrace, target: str | None) -> float:
    """The loss of one traced forward on its own input, as its backward trace scores it (a classifier's:
    that of the class ``target``)."""
    if "backward" not in run.family.actions:
        raise ValueError(f"a sweep ranks heads by the rise of the loss; a {run.config.family} run has no loss")
    return float(
        run.family.loss(run, trace, trace["logits"][None], target, None)[0]
    )  # the logits with their batch of one


def _validation_windows(run: InspectedRun, windows: int) -> tuple[Tensor, list[int], int]:
    """The ids of the run's validation text, the starts of ``windows`` full-context windows spread evenly
    over them, and the window length (a generator's: the only family whose data is one text)."""
    if windows < 1 and "windows" in run.family.actions:
        raise ValueError(f"windows must be at least 1, got {windows}")
    return run.family.windows(run, windows)


def text_windows(run: InspectedRun, windows: int) -> tuple[Tensor, list[int], int]:
    """A generator's validation ids, split off as in training, and ``windows`` evenly spread starts."""
    ids = torch.tensor(run.tokenizer.encode(recorded_text(run)), dtype=torch.long)
    _, val = split_text(ids, run.hyperparameters["data"].get("val_fraction", 0.1))
    t = min(run.config.max_length, MAX_TOKENS, len(val))
    return val, torch.linspace(0, len(val) - t, windows).long().unique().tolist(), t


def validation_head_sweep(run: InspectedRun, windows: int) -> dict[str, Any]:
    """``head_sweep`` over ``windows`` windows of a generator's own validation text: each head's rise in
    loss averaged over them, so the ranking says what the model needs in general, not on one input."""
    val, starts, t = _validation_windows(run, windows)
    sweeps = [head_sweep(run, run.tokenizer.decode(val[s : s + t].tolist(), skip_special=False)) for s in starts]
    totals: dict[str, list[float]] = {}
    for sweep in sweeps:
        for row in sweep["heads"]:
            loss, rise = totals.get(row["head"], [0.0, 0.0])
            totals[row["head"]] = [loss + row["loss"], rise + row["rise"]]
    n = len(sweeps)
    rows: list[dict[str, Any]] = [
        {"head": h, "loss": round(loss / n, 5), "rise": round(rise / n, 5)} for h, (loss, rise) in totals.items()
    ]
    rows.sort(key=lambda r: -r["rise"])
    return {"loss": round(sum(sw["loss"] for sw in sweeps) / n, 5), "heads": rows, "windows": n}


def head_sweep(run: InspectedRun, text: str, target: str | None = None) -> dict[str, Any]:
    """Each head switched off in turn (through the same forward): how much the loss on ``text`` rises,
    heads ranked from the one the prediction needs most. A classifier's loss is that of the class the
    whole model predicts."""
    base = trace_forward(run, text, target=target)
    heads = [base.traced[n].place.scope for n in base.find(role="heads")]  # every attention layer
    n_heads = run.config.n_heads
    if len(heads) * n_heads > MAX_SWEEP_HEADS:
        raise ValueError(
            f"a sweep runs at most {MAX_SWEEP_HEADS} forwards; this model has {len(heads) * n_heads} heads"
        )
    kept = target if target is not None else run.family.kept_target(run, base)  # a classifier's prediction
    base_loss = _loss(run, base, kept)
    rows: list[dict[str, Any]] = []
    for scope in heads:
        for h in range(n_heads):
            spec = f"{scope}.head.{h}"
            off = trace_forward(run, text, target=target, edits=switch_off([spec], n_heads))
            loss = _loss(run, off, kept)
            rows.append({"head": spec, "loss": round(loss, 5), "rise": round(loss - base_loss, 5)})
    rows.sort(key=lambda r: -r["rise"])
    return {"loss": round(base_loss, 5), "heads": rows}

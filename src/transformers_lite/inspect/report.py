"""One trace report, for ``tlite inspect trace`` and the inspector's forward view alike: the forward trace
of one input as JSON-ready data with what is read out of it.

Shapes: T tokens, V vocabulary, K classes.
"""

from __future__ import annotations

from typing import Any

from .forward import ForwardTrace
from .inspection import InspectedRun
from .questions import questions
from .readout import attention_distance, logit_lens
from .tracing import switch_off, trace_forward

SMALL_VOCABULARY = 128  # up to this many entries, the report names every one (a character model's)


def trace_report(
    run: InspectedRun,
    text: str,
    *,
    target: str | None = None,
    switched_off: list[str] | tuple[str, ...] = (),
    block: str | None = None,
    position: int = -1,
    seed: int | None = None,
) -> tuple[ForwardTrace, dict[str, Any]]:
    """The forward trace of ``text`` (a translator's source, with its ``target``) and its report: the
    steps outside blocks and those of ``block`` (every step when ``None``), the prediction read out at
    each block boundary at ``position`` (``lens``), each head's mean attention distance, the output
    layer's entries named, the notes on what the model read; with steps ``switched_off``, how far the
    output moved (the largest change of a probability, and per position where it moved most); with a
    ``seed``, a question for every step (``questions``: predict, then reveal)."""
    edits = switch_off(switched_off, run.config.n_heads)
    traced = trace_forward(run, text, target=target, edits=edits)
    out = traced.to_json(block) | {
        "lens": logit_lens(run, traced, position),
        "attention_distance": attention_distance(traced),
        "attention_distance_uniform": attention_distance(traced, uniform=True),
        "notices": list(traced.notes),
    }
    if seed is not None:
        out["questions"] = questions(traced, seed)
        if not traced.classes:  # a token asked for is named by its text, as the page's bars name it
            for asked in out["questions"].values():
                if "choice_ids" in asked:
                    asked["choices"] = [run.tokenizer.shown(i) for i in asked["choice_ids"]]
    vocabulary = traced["probabilities"].shape[-1]
    if not traced.classes and vocabulary <= SMALL_VOCABULARY:
        out["vocabulary"] = [run.tokenizer.shown(i) for i in range(vocabulary)]
    for step in out["steps"]:
        for row in step.get("top", []):
            for entry in row:
                entry["token"] = run.tokenizer.shown(entry["id"])
    if switched_off:
        plain = trace_forward(run, text, target=target)
        moved = (traced["probabilities"] - plain["probabilities"]).abs()  # (T, V) or (K,)
        out["switched_off"] = {"steps": list(switched_off), "largest_probability_change": round(float(moved.max()), 5)}
        if moved.dim() == 2:  # which position moved most, and how far the one followed moved
            per_position = moved.amax(-1)  # (T,)
            where = int(per_position.argmax())
            shown = position if -len(per_position) <= position < len(per_position) else -1
            out["switched_off"] |= {
                "largest_at": where,
                "largest_at_token": traced.tokens[where],
                "change_at_position": round(float(per_position[shown]), 5),
            }
    return traced, out

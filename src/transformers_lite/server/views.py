"""What a run does with an input, as the inspector shows it: one function per view, taking a loaded run
(the run panel, before any input, is ``panel``).

Inputs are bounded (``Limits``); anything cut or read differently is reported in ``notices`` (the page
shows them) instead of being refused: an over-long prompt keeps its end, characters the model never saw
are listed and read as its unknown symbol.

Shapes: L blocks, H heads, T tokens (targets), S source tokens, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..evaluation.prediction import class_names, encode_for_classifier, probabilities
from ..generation.prompt import prompt_pieces, read_prompt
from ..generation.sampling import filter_logits, scale
from ..generation.translate import DecodeSettings, decode_batch, encode_source
from ..inspect.readout import head_sweep, validation_head_sweep
from ..inspect.report import trace_report
from ..inspect.scores import (
    all_cross_attention,
    all_generator_attention,
    classifier_attention,
)
from ..models.ensemble import classifier_members
from ..pipeline import Run
from ..tokenizers.unknown import unknown_notes


@dataclass(frozen=True)
class Limits:
    prompt_chars: int = 2000  # a longer prompt keeps its last characters
    text_chars: int = 5000  # a longer review or source text keeps its first characters
    max_new_tokens: int = 1000
    heatmap_tokens: int = 64  # attention maps show at most the last this-many tokens
    top_tokens: int = 20  # next-token bars
    sampling_logits: int = 4096  # the logits the page re-tempers at once: every one up to this vocabulary size
    embedding_points: int = 2000  # the scatter shows the first this-many vocabulary entries
    concurrent_generations: int = 2  # more wait their turn


LIMITS = Limits()


def prepare_prompt(run: Run, prompt: str) -> dict[str, Any]:
    """The prompt as the model reads it: ``text`` (cut to its end when too long), its token ``ids``,
    its ``tokens`` (the text each token adds, joined they give ``text``), the ``unknown`` characters
    the model never saw, and ``notices`` for the page."""
    notices: list[str] = []
    prompt = bounded(prompt, notices, "the prompt", LIMITS.prompt_chars, keep_end=True)
    read = read_prompt(run.tokenizer, prompt)
    if read.notice:
        notices.append(read.notice)
    tokens = prompt_pieces(run.tokenizer, prompt, read.ids)
    return {"text": prompt, "ids": read.ids, "tokens": tokens, "unknown": read.unknown, "notices": notices}


def stream_tokens(run: Run, prompt: str, max_new_tokens: int, **sampling: Any) -> Iterator[dict[str, Any]]:  # noqa: ANN401
    """One ``{"id", "text"}`` per generated token of ``prompt`` (already checked by ``prepare_prompt``)."""
    yield from run.stream(prompt, max_new_tokens, warn_unknown=False, **sampling)


@torch.no_grad()
def next_token_view(
    run: Run, context: str, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> dict[str, Any]:
    """After ``context``: the most likely next tokens with the probabilities sampling draws from under
    ``temperature``/``top_k``/``top_p`` (``p``; the model's own softmax as ``model_p``), and every block's
    and head's attention over the last ``heatmap_tokens`` tokens of the window the model reads."""
    prompt = prepare_prompt(run, context)
    ids, notices = prompt["ids"], prompt["notices"]
    window = torch.tensor(ids[-run.config.max_length :])
    attention = all_generator_attention(run.model, window)  # (L, H, T, T)
    logits = run.model(window[None], last_only=True)[0, -1:].float()  # (1, V)
    model_probs = torch.softmax(logits, dim=-1)[0]  # (V,)
    probs = torch.softmax(filter_logits(scale(logits, temperature), top_k, top_p), dim=-1)[0]  # (V,) what is drawn
    top = torch.topk(probs, min(LIMITS.top_tokens, len(probs)))
    shown = min(len(window), LIMITS.heatmap_tokens)
    if len(window) > shown:
        notices.append(f"attention maps show the last {shown} of the {len(window)} tokens the model reads")
    settings = [f"temperature {temperature:g}"]
    settings += [] if top_k is None else [f"top-k {top_k}"]
    settings += [] if top_p is None else [f"top-p {top_p:g}"]
    return {
        "tokens": [run.tokenizer.shown(i) for i in window[-shown:].tolist()],
        "top": [
            {"id": i, "token": run.tokenizer.shown(i), "p": round(p, 5), "model_p": round(float(model_probs[i]), 5)}
            for i, p in zip(top.indices.tolist(), top.values.tolist())
        ],
        "sampling": ", ".join(settings),
        "logits": _logits(run, logits[0]),
        "attention": _rounded(attention[:, :, -shown:, -shown:]),
        "notices": notices,
    }


def _logits(run: Run, logits: Tensor) -> dict[str, Any]:
    """The model's logits ``(V,)`` less their maximum, largest first: the page redraws the probabilities
    under another temperature, top-k or top-p from them at once. Up to ``sampling_logits`` of them (every
    one for a character model); ``rest`` is the model's probability of those left out (0: none)."""
    shifted = logits.float() - logits.max()  # (V,) <= 0: softmax and its cut-offs ignore the shift
    best = torch.topk(shifted, min(LIMITS.sampling_logits, len(shifted)))
    rest = 1.0 - float(torch.softmax(shifted, -1)[best.indices].sum()) if len(best.indices) < len(shifted) else 0.0
    return {
        "tokens": [run.tokenizer.shown(i) for i in best.indices.tolist()],
        "values": [round(v, 5) for v in best.values.tolist()],
        "vocabulary": len(shifted),
        "rest": round(max(rest, 0.0), 6),
    }


# ---------------------------------------------------------------- classifier
@torch.no_grad()
def classify_view(run: Run, text: str) -> dict[str, Any]:
    """Predicted class with every probability, the words the model read, and per member (of an
    ensemble), block and head the attention each word receives (the mean over the words reading it)."""
    notices: list[str] = []
    text = bounded(text, notices, "the review")
    cfg = run.config
    n_words = len(run.tokenizer.encode(text))
    if n_words == 0:
        raise ValueError("text: no word the model knows; the review reads as empty")
    if n_words > cfg.max_length:
        notices.append(f"the model reads the first {cfg.max_length} of the review's {n_words} words")
    ids, valid = encode_for_classifier(run.tokenizer, [text], cfg.max_length, cfg.pads_to_length)  # (1, T)
    logits = run.model(ids, valid)
    probs = probabilities(logits)[0]  # (K,)
    names = class_names(cfg)
    n = int(valid[0].sum())
    members = []
    for member in range(len(classifier_members(run.model))):  # an ensemble's heads differ member by member
        weights = classifier_attention(run.model, ids[0], valid[0], member)  # L x (H, T, T)
        received = [(w[:, :n, :n].sum(1) / n).tolist() for w in weights]  # L x H x T: mean attention received
        members.append([[[round(x, 5) for x in head] for head in block] for block in received])
    words = [run.tokenizer.shown(i) for i in ids[0, :n].tolist()]
    notices += unknown_notes("the review", run.tokenizer, text)  # the words read as the unknown word, counted
    return {
        "prediction": names[int(probs.argmax())],
        "probabilities": {k: round(float(p), 5) for k, p in zip(names, probs)},
        "words": words,
        "received": members[0],  # the first member's (the whole model's when it is one)
        "members": members,  # member x block x head x word
        "notices": notices,
    }


# ---------------------------------------------------------------- translator
@torch.no_grad()
def translate_view(run: Run, text: str, beam: int) -> dict[str, Any]:
    """The translation, its tokens and the source tokens, and every decoder block's and head's
    cross-attention ``(L, H, T, S)``: each target token (after BOS) over the source tokens."""
    notices: list[str] = []
    text = bounded(text, notices)
    src_tok, tgt_tok, limit = run.src_tokenizer, run.tokenizer, run.config.max_length
    if len(src_tok.encode(text)) > limit - 1:
        notices.append(f"the model reads the first {limit - 1} tokens of the text")
    src = torch.tensor(encode_source(src_tok, text, limit))  # (S,)
    notices += unknown_notes("the text", src_tok, text)
    if len(src) <= 1:
        raise ValueError("text: nothing the tokenizer can read")
    settings = DecodeSettings(beam=beam)
    out = decode_batch(run.model, src[None], tgt_tok.need("bos"), tgt_tok.need("eos"), settings)[0]
    tgt_in = torch.tensor([tgt_tok.bos_id, *out])  # (T,): what the decoder read at each step
    attention = all_cross_attention(run.model, src, tgt_in)  # (L, H, T, S)
    return {
        "translation": tgt_tok.decode(out),
        "source_tokens": [src_tok.shown(i) for i in src.tolist()],
        "target_tokens": [tgt_tok.shown(i) for i in [*out, tgt_tok.need("eos")]],
        "attention": _rounded(attention),
        "notices": notices,
    }


# ---------------------------------------------------------------- every family
def bounded(
    text: str, notices: list[str], what: str = "the text", limit: int = LIMITS.text_chars, keep_end: bool = False
) -> str:
    """``text`` cut to ``limit`` characters (its first; its last with ``keep_end``), and a notice saying so."""
    if len(text) <= limit:
        return text
    notices.append(f"{what} was cut to its {'last' if keep_end else 'first'} {limit:,} characters")
    return text[-limit:] if keep_end else text[:limit]


def trace_view(run: Run, request: Any) -> dict[str, Any]:  # noqa: ANN401 - routes.TraceRequest
    """``inspect.report.trace_report`` of the (bounded) text: the steps outside blocks and those of
    ``request.block``, the logit lens at ``request.position``, the heads' attention distance, and with
    steps switched off how far the output moved."""
    notices: list[str] = []
    text = bounded(request.text, notices)
    _, out = trace_report(
        run,
        text,
        target=request.target,
        switched_off=request.switch_off,
        block=request.block,
        position=request.position,
        seed=request.seed,
    )
    return out | {"notices": notices + out["notices"]}


def backward_view(run: Run, request: Any) -> dict[str, Any]:  # noqa: ANN401 - routes.BackwardRequest
    """``inspect.backward.trace_backward`` of the (bounded) text, as JSON."""
    notices: list[str] = []
    text = bounded(request.text, notices)
    result = run.backward_trace(text, target=request.target, position=request.position)
    return result.to_json() | {"notices": notices + result.forward.notes}


def sweep_view(run: Run, text: str, target: str | None, windows: int = 0) -> dict[str, Any]:
    """``inspect.readout.head_sweep`` on the (bounded) text, or with ``windows`` over that many windows of a
    generator's validation text (``validation_head_sweep``)."""
    notices: list[str] = []
    if windows:
        return validation_head_sweep(run, windows) | {"notices": notices}
    return head_sweep(run, bounded(text, notices), target) | {"notices": notices}


def _rounded(t: Tensor) -> list:
    return (t.float() * 1e4).round().div(1e4).tolist()

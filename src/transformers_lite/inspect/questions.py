"""Predict, then reveal: one question per step of a forward trace, asked before the step's map is shown.

Each question is made from the step's record (its kind, its equation's constants, what it read) and
this run's tensors on this input, never written by hand per preset; every kind of step has one. A
question is only asked about what the learner can derive from what the walk showed before it (the
steps it ``uses``, which come earlier in the walk, and the model's sizes from its parameter table):

* a **value**: a sum of two values shown (``x = E[id] + PE[t]``, a residual sum), a score times the
  step's constant (``scaled = scores / √d_h``), a soft cap of a logit, sin(t) for a sinusoidal table;
* a **choice**: which key gets the largest weight (the largest masked score), which position's value
  weighs most in a head's output, which token (or class) is most likely (the largest logit), whether a
  query may read a key (the mask's rule);
* a **sign**: whether a sum of two values shown is positive;
* a **shape**: anything else, from the step's axes and the model's sizes.

A value is made from the tensors, then checked against what the page shows (values rounded to
``digits`` decimals): its ``tolerance`` covers that rounding. Positions, heads and channels are drawn
from a generator seeded with ``seed`` and the step's name, so a run, an input and a seed always give the
same questions. Shapes: T tokens (S keys), C channels, H heads, D head size, F feed-forward width,
V vocabulary, K classes.
"""

from __future__ import annotations

import math
import random
import zlib
from typing import Any

from torch import Tensor

from .forward import ForwardTrace

Question = dict[str, Any]

LETTERS = {"T": "tokens", "S": "keys", "C": "channels", "H": "heads", "D": "the head size", "F": "units", "V": "tokens"}


def questions(trace: ForwardTrace, seed: int = 0, digits: int = 5) -> dict[str, Question]:
    """A question for every step of ``trace``, by step name (see the module docstring)."""
    out = {}
    for name in trace.names():
        rng = random.Random(zlib.crc32(f"{seed}:{name}".encode()))
        out[name] = _question(trace, name, rng, digits) or _shape(trace, name, rng)
    return out


def _question(trace: ForwardTrace, name: str, rng: random.Random, digits: int) -> Question | None:
    step = trace.traced[name].step
    kind = step.kind.partition(":")[0]
    if kind in ("sum", "residual_sum"):
        return _sum(trace, name, rng, digits)
    if kind == "scale" and step.factor:
        return _scaled(trace, name, rng, digits)
    if kind == "softmax":
        return _largest(trace, name, rng)
    if kind == "weighted_sum":
        return _weighs_most(trace, name, rng)
    if kind == "mask":
        return _may_read(trace, name, rng)
    if kind == "soft_cap" and step.factor:
        return _capped(trace, name, rng, digits)
    if kind == "position":
        return _sinusoid(trace, name, rng, digits)
    return None


def _read(trace: ForwardTrace, name: str) -> list[str]:
    return list(trace.traced[name].reads)


def _tol(digits: int, terms: int, scale: float = 1.0) -> float:
    """What ``terms`` values each rounded to ``digits`` decimals can move a result, with room to spare."""
    return max(terms * scale * 0.5 * 10.0**-digits, 1e-12) * 2


def _index(shape: tuple[int, ...], rng: random.Random) -> tuple[int, ...]:
    return tuple(rng.randrange(n) for n in shape)


def _tokens(trace: ForwardTrace, name: str) -> list[str]:
    """The tokens a step's T axis runs over: a translator's encoder reads the source."""
    on_source = trace.traced[name].place.side == "source" and trace.source_tokens
    return trace.source_tokens if on_source else trace.tokens


def _keys(trace: ForwardTrace, name: str, size: int) -> list[str]:
    """The tokens a step's S axis (its keys) runs over: the source for cross-attention."""
    own = _tokens(trace, name)
    return trace.source_tokens if size != len(own) and len(trace.source_tokens) == size else own


def _at(trace: ForwardTrace, index: tuple[int, ...], axes: str, name: str = "") -> str:
    """``[t=3 'e', c=7]``: an index named by its axes, a position by its token too."""
    parts = []
    tokens = _tokens(trace, name) if name else trace.tokens
    for letter, i in zip(axes, index):
        if letter == "T" and i < len(tokens):
            parts.append(f"{letter.lower()}={i} ({tokens[i]!r})")
        else:
            parts.append(f"{letter.lower()}={i}")
    return "[" + ", ".join(parts) + "]"


def _short(name: str) -> str:
    return name.split(".")[-1] if "." in name else name


def _sum(trace: ForwardTrace, name: str, rng: random.Random, digits: int) -> Question | None:
    """x = a + b, with a and b shown at the same index in the two steps it read."""
    reads = _read(trace, name)
    t = trace.tensors[name]
    if len(reads) != 2 or any(trace.tensors[r].shape != t.shape for r in reads):
        return None
    index = _index(tuple(t.shape), rng)
    a, b = (float(trace.tensors[r][index]) for r in reads)
    value = float(t[index])
    if abs(value - (a + b)) > 1e-4 * max(1.0, abs(value)):  # the step adds something else too: not asked
        return None
    axes = trace.traced[name].step.axes
    where = _at(trace, index, axes, name)
    if rng.random() < 0.25 and abs(value) > 10.0**-digits * 10:
        return {
            "kind": "sign",
            "prompt": f"{_short(name)}{where} = {_short(reads[0])} + {_short(reads[1])} there: positive or negative?",
            "choices": ["positive", "negative"],
            "answer": 0 if value > 0 else 1,
            "index": list(index),
            "uses": reads,
        }
    return {
        "kind": "value",
        "prompt": f"{_short(name)}{where} = {_short(reads[0])}{where} + {_short(reads[1])}{where} = ?",
        "answer": value,
        "tolerance": _tol(digits, 2),
        "index": list(index),
        "uses": reads,
    }


def _scaled(trace: ForwardTrace, name: str, rng: random.Random, digits: int) -> Question | None:
    step = trace.traced[name].step
    reads = _read(trace, name)
    t = trace.tensors[name]
    if len(reads) != 1 or trace.tensors[reads[0]].shape != t.shape:
        return None
    source = trace.tensors[reads[0]]
    index = _visible(source, rng)
    if index is None:
        return None
    factor = float(step.factor or 1.0)
    value = float(t[index])
    if abs(value - factor * float(source[index])) > 1e-4 * max(1.0, abs(value)):
        return None
    where = _at(trace, index, step.axes, name)
    words = (
        f"÷ √{round(1 / factor**2)}"
        if factor < 1 and abs(1 / factor**2 - round(1 / factor**2)) < 1e-6
        else f"× {factor:.6g}"
    )
    return {
        "kind": "value",
        "prompt": f"{_short(name)}{where} = {_short(reads[0])}{where} {words} = ?",
        "answer": value,
        "tolerance": _tol(digits, 1, max(1.0, factor)),
        "index": list(index),
        "uses": reads,
    }


def _visible(t: Tensor, rng: random.Random) -> tuple[int, ...] | None:
    """A random index of ``t`` holding a finite value (a masked score is −∞)."""
    for _ in range(64):
        index = _index(tuple(t.shape), rng)
        if math.isfinite(float(t[index])) and float(t[index]) > -1e30:
            return index
    return None


def _largest(trace: ForwardTrace, name: str, rng: random.Random) -> Question | None:
    """A softmax: the largest weight is where its input was largest."""
    step = trace.traced[name].step
    reads = _read(trace, name)
    t = trace.tensors[name]
    if not reads or trace.tensors[reads[0]].shape != t.shape:
        return None
    row_index = _index(tuple(t.shape[:-1]), rng)
    row, before = t[row_index], trace.tensors[reads[0]][row_index]
    answer = int(row.argmax())
    if int(before.argmax()) != answer:
        return None
    last = step.axes[-1]
    where = _at(trace, row_index, step.axes[:-1], name)
    if last in ("V", "K"):
        labels = trace.classes if last == "K" else None
        what = "class" if last == "K" else "token"
        choices = _options(row, answer, rng, labels)
        return {
            "kind": "choice",
            "prompt": f"{_short(name)}{where}: which {what} gets the largest probability?",
            "choices": choices["labels"],
            "choice_ids": choices["ids"],
            "answer": choices["answer"],
            "index": list(row_index),
            "uses": reads,
        }
    keys = _keys(trace, name, row.shape[-1])
    return {
        "kind": "choice",
        "prompt": f"{_short(name)}{where}: which key gets the largest weight?",
        "choices": [f"{j} ({keys[j]!r})" if j < len(keys) else str(j) for j in range(row.shape[-1])],
        "answer": answer,
        "index": list(row_index),
        "uses": reads,
    }


def _options(row: Tensor, answer: int, rng: random.Random, labels: list[str] | None) -> dict[str, Any]:
    """The right entry and up to three others of the largest, in a seeded order."""
    ids = [int(i) for i in row.topk(min(4, row.numel())).indices]
    rng.shuffle(ids)
    return {
        "ids": ids,
        "labels": [labels[i] if labels and i < len(labels) else str(i) for i in ids],
        "answer": ids.index(answer),
    }


def _weighs_most(trace: ForwardTrace, name: str, rng: random.Random) -> Question | None:
    """A head's output at a position: the value that weighs most is the largest attention weight's."""
    reads = _read(trace, name)
    weights = next((r for r in reads if trace.traced[r].step.kind == "softmax"), None)
    if weights is None:
        return None
    p = trace.tensors[weights]  # (H, T, S)
    if p.dim() != 3:
        return None
    h, t = rng.randrange(p.shape[0]), rng.randrange(p.shape[1])
    keys, tokens = _keys(trace, weights, p.shape[-1]), _tokens(trace, name)
    return {
        "kind": "choice",
        "prompt": f"{_short(name)}[h={h}, t={t} ({tokens[t]!r})]: whose value weighs most in this sum?",
        "choices": [f"{j} ({keys[j]!r})" if j < len(keys) else str(j) for j in range(p.shape[-1])],
        "answer": int(p[h, t].argmax()),
        "index": [h, t],
        "uses": [weights],
    }


def _may_read(trace: ForwardTrace, name: str, rng: random.Random) -> Question | None:
    m = trace.tensors[name]
    if m.dim() < 2:
        return None
    grid = m.reshape(-1, m.shape[-2], m.shape[-1])[0]  # (T, S): one mask for every head
    t, s = rng.randrange(grid.shape[0]), rng.randrange(grid.shape[1])
    readable = bool(grid[t, s] > -1e30)
    tokens, keys = _tokens(trace, name), _keys(trace, name, grid.shape[1])
    return {
        "kind": "choice",
        "prompt": f"may query t={t} ({tokens[t]!r}) read key s={s} ({keys[s]!r})?",
        "choices": ["yes (M = 0)", "no (M = −∞)"],
        "answer": 0 if readable else 1,
        "index": [t, s],
        "uses": [],
    }


def _capped(trace: ForwardTrace, name: str, rng: random.Random, digits: int) -> Question | None:
    step = trace.traced[name].step
    reads = _read(trace, name)
    t = trace.tensors[name]
    if len(reads) != 1 or trace.tensors[reads[0]].shape != t.shape:
        return None
    index = _index(tuple(t.shape), rng)
    c, z = float(step.factor or 1.0), float(trace.tensors[reads[0]][index])
    value = float(t[index])
    if abs(value - c * math.tanh(z / c)) > 1e-4 * max(1.0, abs(value)):
        return None
    where = _at(trace, index, step.axes, name)
    return {
        "kind": "value",
        "prompt": f"{_short(name)}{where} = {c:g} · tanh({_short(reads[0])}{where} / {c:g}) = ?",
        "answer": value,
        "tolerance": _tol(digits, 1),
        "index": list(index),
        "uses": reads,
    }


def _sinusoid(trace: ForwardTrace, name: str, rng: random.Random, digits: int) -> Question | None:
    """A sinusoidal table's channel 0 is sin(t): asked where the table is that one."""
    t = trace.tensors[name]
    if t.dim() != 2 or t.shape[-1] < 2:
        return None
    pos = rng.randrange(t.shape[0])
    if any(abs(float(t[p, 0]) - math.sin(p)) > 1e-5 for p in range(t.shape[0])):
        return None
    return {
        "kind": "value",
        "prompt": f"{_short(name)}[t={pos}, c=0] = sin({pos} / 10000^(0/C)) = ?",
        "answer": float(t[pos, 0]),
        "tolerance": _tol(digits, 1),
        "index": [pos, 0],
        "uses": [],
    }


def _shape(trace: ForwardTrace, name: str, rng: random.Random) -> Question:
    """The step's shape, from its axes and the model's sizes (a head's part of it, for a per-head step)."""
    step = trace.traced[name].step
    shape = list(trace.tensors[name].shape)
    axes = step.axes
    if axes[:1] == "H" and len(shape) == len(axes) and rng.random() < 0.5:
        h = rng.randrange(shape[0])
        return {
            "kind": "shape",
            "prompt": f"{_short(name)}: the shape of head {h}'s part? ({', '.join(axes[1:])})",
            "answer": shape[1:],
            "uses": [],
        }
    return {
        "kind": "shape",
        "prompt": f"{_short(name)}: its shape? ({', '.join(axes)})",
        "answer": shape,
        "uses": [],
    }

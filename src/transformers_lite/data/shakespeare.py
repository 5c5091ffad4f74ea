"""Shakespeare text for the character GPT (seed 004).

* ``prepare_gutenberg``: turn Project Gutenberg's Complete Works (pg100.txt) into plays only.
* ``text_stats``: the seed's statistics (lines, passages, words, characters, ...).
* ``split_text``: a contiguous train/validation split (validation = the last fraction).
* ``get_shifted_batch``: random windows ``X (B, T)`` and targets ``Y = X shifted by one``.
* ``steps_per_epoch``: the seed's epoch, ``0.95 L / (T B)`` steps, so each character appears about
  once per position per epoch.
"""

from __future__ import annotations

import re

import torch
from torch import Tensor

_SPEAKER = re.compile(r"^[A-Z][A-Z0-9 '’,&\-]*[A-Z]\.$")  # "LYSANDER." or "FIRST CITIZEN."
_HEADING = re.compile(r"^(ACT|SCENE|PROLOGUE|EPILOGUE|INDUCTION|THE END|Contents|CONTENTS|Dramatis|DRAMATIS)\b")
_KEEP_NON_ASCII = "—‘’“”"


def prepare_gutenberg(raw: str, *, ascii_only: bool = True) -> str:
    """Keep only the plays' speeches from a Project Gutenberg Complete Works file.

    Removes the Gutenberg header, footer and licence (outside the ``*** START``/``*** END`` markers),
    the table of contents, the sonnets and poems, act/scene headings and character lists, by keeping
    only passages (blocks separated by blank lines) that open with a speaker line such as
    ``LYSANDER.`` followed by speech. Replaces the archaic ``&c.`` with ``etc.`` and drops other
    ``&``. With ``ascii_only`` the few other non-ASCII letters (œ, Æ, æ, ...) are removed; the dashes
    and curly quotes the seed keeps (—‘’“”) stay.
    """
    text = raw.replace("\r\n", "\n").replace("\ufeff", "")
    start = re.search(r"^\*\*\* ?START OF (THE|THIS) PROJECT GUTENBERG.*$", text, re.M)
    end = re.search(r"^\*\*\* ?END OF (THE|THIS) PROJECT GUTENBERG.*$", text, re.M)
    if start and end and end.start() > start.end():
        text = text[start.end() : end.start()]
    elif start:
        text = text[start.end() :]
    elif end:
        text = text[: end.start()]
    passages = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln.rstrip() for ln in block.strip("\n").split("\n") if ln.strip()]
        if len(lines) < 2 or _HEADING.match(lines[0].strip()):
            continue
        first = lines[0].strip()
        if not _SPEAKER.match(first) or not any(c.islower() for c in lines[1]):
            continue  # not "SPEAKER." followed by speech: contents, sonnets, headings, cast lists
        passages.append("\n".join(ln.strip() for ln in lines))
    out = "\n\n".join(passages) + "\n"
    out = out.replace("&c.", "etc.").replace("&", "")
    if ascii_only:
        out = "".join(ch for ch in out if ch.isascii() or ch in _KEEP_NON_ASCII)
    return out


def text_stats(text: str) -> dict[str, int | float]:
    """The seed's statistics of a prepared text."""
    lines = text.split("\n")
    passages = [p for p in re.split(r"\n\n+", text) if p.strip()]
    return {
        "characters": len(text),
        "unique_characters": len(set(text)),
        "lines": text.count("\n"),
        "passages": len(passages),
        "words": len(re.findall(r"\w+", text)),
        "longest_line": max((len(ln) for ln in lines), default=0),
        "longest_passage": max((len(p) for p in passages), default=0),
        # as the seed: characters other than newlines per line (4,963,197 chars, 182,027 lines -> 26.27)
        "mean_line_length": round((len(text) - text.count("\n")) / max(text.count("\n"), 1), 2),
    }


def split_text(data: Tensor | str, val_fraction: float = 0.1):  # noqa: ANN201 - same type as data
    """Contiguous split: the first ``1 - val_fraction`` for training, the rest for validation."""
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    n_train = len(data) - int(len(data) * val_fraction)
    return data[:n_train], data[n_train:]


def get_shifted_batch(rng: torch.Generator, data: Tensor, context: int, batch: int) -> tuple[Tensor, Tensor]:
    """Random windows of ``context`` ids: ``X (B, T)`` and ``Y (B, T)`` with ``Y[:, i] = X[:, i + 1]``'s source."""
    if data.dim() != 1:
        raise ValueError(f"data must be a 1-D tensor of ids, got shape {tuple(data.shape)}")
    if len(data) < context + 1:
        raise ValueError(f"text of {len(data)} tokens is too short for context {context} (+1 for the target)")
    starts = torch.randint(0, len(data) - context, (batch,), generator=rng)  # (B,)
    index = starts[:, None] + torch.arange(context + 1)[None, :]  # (B, T + 1)
    window = data[index]  # (B, T + 1)
    return window[:, :-1], window[:, 1:]


def steps_per_epoch(n_tokens: int, context: int, batch: int) -> int:
    """The seed's epoch: ``0.95 L / (T B)`` random-window steps."""
    return max(1, int(0.95 * n_tokens / (context * batch)))

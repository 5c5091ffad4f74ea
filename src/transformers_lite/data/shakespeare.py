"""Shakespeare text for the character GPT (post 004).

* ``gutenberg.prepare_complete_works`` (its own module): the Complete Works -> plays only.
* ``text_stats``: the post's statistics (lines, passages, words, characters, ...).
* ``split_text``: a contiguous train/validation split (validation = the last fraction).
* ``get_shifted_batch``: random windows ``X (B, T)`` and targets ``Y = X shifted by one``.
* ``steps_per_epoch``: the post's epoch, so each training character appears about once per position
  per epoch: ``L_train / (T B)`` steps, which is post 004's ``0.95 L / (T B)`` for its 95/5 split.
"""

from __future__ import annotations

import re

import torch
from torch import Tensor


def text_stats(text: str) -> dict[str, int | float]:
    """The post's statistics of a prepared text."""
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
        # as post 004: characters other than newlines per line (4,963,197 chars, 182,027 lines -> 26.27)
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


def steps_per_epoch(n_train_tokens: int, context: int, batch: int) -> int:
    """Random-window steps per epoch: ``L_train / (T B)`` (the post's ``0.95 L / (T B)`` with a 95/5 split)."""
    return max(1, n_train_tokens // (context * batch))

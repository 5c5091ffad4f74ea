"""Parallel corpora (Multi30k German->English): loading, length filtering, length-bucketed batches.

Shapes: B sentence pairs, S source length, T target length (with BOS or EOS added).
A batch holds ``src (B, S)``, ``src_valid``, ``tgt_in (B, T)`` = BOS + target, ``tgt_out (B, T)`` =
target + EOS, and ``tgt_valid``; the decoder learns to predict ``tgt_out`` from ``tgt_in``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from torch import Tensor

from ..tokenizers import pad_batch
from .sources import read_text_file


def load_parallel(src_path: str | Path, tgt_path: str | Path) -> tuple[list[str], list[str]]:
    """Aligned line files (plain or ``.gz``); a clear error when their line counts differ."""
    src = read_text_file(src_path).rstrip("\n").split("\n")
    tgt = read_text_file(tgt_path).rstrip("\n").split("\n")
    if len(src) != len(tgt):
        raise ValueError(
            f"parallel files differ in length: {src_path} has {len(src)} lines, {tgt_path} has {len(tgt)} lines"
        )
    return [s.strip() for s in src], [t.strip() for t in tgt]


def filter_by_length(
    src: list[list[int]], tgt: list[list[int]], max_length: int, min_length: int = 1
) -> tuple[list[list[int]], list[list[int]]]:
    """Drop pairs where either side is shorter than ``min_length`` or longer than ``max_length`` ids."""
    keep = [
        i
        for i, (s, t) in enumerate(zip(src, tgt))
        if min_length <= len(s) <= max_length and min_length <= len(t) <= max_length
    ]
    return [src[i] for i in keep], [tgt[i] for i in keep]


@dataclass
class TranslationBatch:
    src: Tensor
    src_valid: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    tgt_valid: Tensor

    def to(self, device) -> TranslationBatch:  # noqa: ANN001
        return TranslationBatch(
            *(getattr(self, f).to(device) for f in ("src", "src_valid", "tgt_in", "tgt_out", "tgt_valid"))
        )


def make_batch(
    src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]], pad_id: int, bos_id: int, eos_id: int
) -> TranslationBatch:
    src_ids, src_valid = pad_batch(src, pad_id)
    tgt_in, tgt_valid = pad_batch([[bos_id, *t] for t in tgt], pad_id)
    tgt_out, _ = pad_batch([[*t, eos_id] for t in tgt], pad_id)
    return TranslationBatch(src_ids, src_valid, tgt_in, tgt_out, tgt_valid)


def bucket_batches(
    src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]], max_tokens: int, *, seed: int | None = 0
) -> list[list[int]]:
    """Group pair indices of similar length into batches of at most ``max_tokens`` (padded) tokens.

    Pairs are sorted by length (with a seeded shuffle inside equal lengths), cut into batches, and
    the batch order is shuffled with ``seed`` (``None`` keeps the sorted order, for evaluation).
    """
    rng = np.random.default_rng(seed)
    lengths = np.array([max(len(s), len(t)) + 1 for s, t in zip(src, tgt)])
    jitter = rng.random(len(lengths)) if seed is not None else np.zeros(len(lengths))
    order = np.lexsort((jitter, lengths))
    batches, current, longest = [], [], 0
    for i in order:
        longest_new = max(longest, lengths[i])
        if current and longest_new * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest_new = [], lengths[i]
        current.append(int(i))
        longest = longest_new
    if current:
        batches.append(current)
    if seed is not None:
        rng.shuffle(batches)
    return batches

"""Word vectors from co-occurrence counts: positive PMI + truncated SVD (no labels, no outside data).

Twelve thousand labelled reviews are too few for a randomly initialised embedding table to learn
which words behave alike; the co-occurrence statistics of the same reviews already say a lot
(words of complaints keep company with each other). This module turns the training texts into
starting embeddings, the classic count-based alternative to word2vec:

1. ``cooccurrence_counts``: for every pair of tokens at most ``window`` positions apart in the
   same review, count (w, c) and (c, w) -> a symmetric sparse ``(V, V)`` matrix ``N``.
2. ``ppmi``: ``PMI(w, c) = log(P(w, c) / (P(w) P_alpha(c)))`` with ``P(w, c) = N(w, c) / N``,
   ``P(w) = N(w) / N`` (``N`` = all counts, ``N(w)`` = row sums) and the context distribution
   smoothed by ``alpha``: ``P_alpha(c) ∝ N(c)^alpha`` (0.75 damps rare contexts); negatives
   clipped to 0.
3. ``ppmi_vectors``: the top ``dim`` singular directions, ``U sqrt(S)`` (one row per word),
   centred and scaled to unit standard deviation over the words that occur; words that never
   occur (and the pad id) get zero rows.

Shapes: N texts, T tokens, V vocabulary, C = dim.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from ..optional import need


def cooccurrence_counts(ids: Tensor | np.ndarray, valid: Tensor | np.ndarray, vocab_size: int, window: int):  # noqa: ANN201
    """Symmetric sparse counts ``(V, V)`` (scipy CSR, float64) of token pairs within ``window``.

    ``ids (N, T)`` and ``valid (N, T)`` as made by a tokenizer's ``encode_batch``; only valid positions count.
    """
    sp = need("scipy.sparse", "classifier", "PPMI embeddings")

    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    ids, valid = np.asarray(ids), np.asarray(valid, dtype=bool)
    if ids.shape != valid.shape or ids.ndim != 2:
        raise ValueError(f"ids {ids.shape} and valid {valid.shape} must be matching (N, T) arrays")
    if ids.size and (ids[valid].min(initial=0) < 0 or ids[valid].max(initial=0) >= vocab_size):
        raise ValueError(f"token ids must be in 0..{vocab_size - 1}")
    rows, cols = [], []
    for offset in range(1, min(window, ids.shape[1] - 1) + 1):
        both = valid[:, :-offset] & valid[:, offset:]  # (N, T - offset): both ends are real tokens
        left, right = ids[:, :-offset][both], ids[:, offset:][both]
        rows += [left, right]
        cols += [right, left]
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    counts = sp.coo_matrix((np.ones(len(r)), (r, c)), shape=(vocab_size, vocab_size)).tocsr()
    counts.sum_duplicates()
    return counts


def ppmi(counts, alpha: float = 0.75):  # noqa: ANN001, ANN201
    """Positive pointwise mutual information of a count matrix, context probabilities ``∝ N(c)^alpha``."""
    sp = need("scipy.sparse", "classifier", "PPMI embeddings")

    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    coo = counts.tocoo()
    total = coo.data.sum()
    if total == 0:
        return sp.csr_matrix(counts.shape)
    word = np.asarray(counts.sum(axis=1)).ravel() / total  # P(w)
    context = np.asarray(counts.sum(axis=0)).ravel() ** alpha
    context /= context.sum()  # P_alpha(c)
    pmi = np.log(coo.data / total) - np.log(word[coo.row]) - np.log(context[coo.col])
    keep = pmi > 0
    return sp.csr_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=counts.shape)


def ppmi_vectors(
    ids: Tensor | np.ndarray,
    valid: Tensor | np.ndarray,
    vocab_size: int,
    dim: int,
    *,
    window: int = 10,
    alpha: float = 0.75,
    seed: int = 0,
) -> Tensor:
    """``(V, dim)`` float32 word vectors from the texts ``ids``/``valid`` (see the module docstring).

    Deterministic for a given random ``seed`` (randomized SVD). Unit standard deviation matches the
    classifier's ``N(0, 1)`` embedding initialisation (seed 000), so the position encoding keeps its
    relative weight.
    """
    return ppmi_vector_draws(ids, valid, vocab_size, dim, window=window, alpha=alpha, seeds=[seed])[0]


def ppmi_vector_draws(
    ids: Tensor | np.ndarray,
    valid: Tensor | np.ndarray,
    vocab_size: int,
    dim: int,
    *,
    window: int = 10,
    alpha: float = 0.75,
    seeds: Sequence[int] = (0,),
) -> list[Tensor]:
    """``ppmi_vectors`` for each random seed in ``seeds`` (one per member of an ensemble), counting the
    co-occurrences once: the draws of the randomized SVD differ, the statistics do not."""
    randomized_svd = need("sklearn.utils.extmath", "classifier", "PPMI embeddings").randomized_svd

    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    counts = cooccurrence_counts(ids, valid, vocab_size, window)
    matrix = ppmi(counts, alpha)
    seen = np.asarray(counts.sum(axis=1)).ravel() > 0
    rank = min(dim, vocab_size - 1)
    draws = []
    for seed in seeds:
        vectors = np.zeros((vocab_size, dim))
        if seen.sum() > 1 and matrix.nnz and rank >= 1:
            u, s, _ = randomized_svd(matrix, rank, random_state=seed)
            e = (u * np.sqrt(s))[seen]  # (V_seen, rank)
            e = e - e.mean(axis=0)
            vectors[seen, :rank] = e / max(float(e.std()), 1e-12)
        draws.append(torch.from_numpy(vectors.astype(np.float32)))
    return draws

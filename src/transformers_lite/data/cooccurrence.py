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
3. ``ppmi_vectors``: per random seed, the top ``dim`` singular directions (``randomized_svd``), ``U sqrt(S)`` (one
   row per word), centred and scaled to unit standard deviation over the words that occur; words
   that never occur (and the pad id) get zero rows.

Everything is torch (sparse COO matrices, float64) and numpy: no extra package. ``randomized_svd``
follows scikit-learn's ``randomized_svd`` step by step and draws the same random start from the
same seed, so the vectors are the ones the published results were measured with (a test compares
them where scikit-learn is installed).

Shapes: N texts, T tokens, V vocabulary, C = dim, K = C + oversamples (random probe directions).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor


def cooccurrence_counts(ids: Tensor | np.ndarray, valid: Tensor | np.ndarray, vocab_size: int, window: int) -> Tensor:
    """Symmetric counts ``(V, V)`` (a coalesced sparse COO tensor, float64) of token pairs within ``window``.

    ``ids (N, T)`` and ``valid (N, T)`` as made by a tokenizer's ``encode_batch``; only valid positions count.
    """
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
    # sum repeated pairs: a sorted flat key w * V + c per pair (sorting is 4x faster than torch's coalesce)
    keys, n = np.unique(r.astype(np.int64) * vocab_size + c, return_counts=True)  # (pairs,), (pairs,)
    pairs = torch.from_numpy(np.stack([keys // vocab_size, keys % vocab_size]))  # (2, pairs), in coalesced order
    return _sparse(pairs, torch.from_numpy(n.astype(np.float64)), vocab_size)


def _sparse(pairs: Tensor, values: Tensor, size: int) -> Tensor:
    """A ``(size, size)`` sparse COO tensor from ``(2, nnz)`` indices already sorted by (row, column)."""
    return torch.sparse_coo_tensor(pairs, values, (size, size), is_coalesced=True, check_invariants=True)


def ppmi(counts: Tensor, alpha: float = 0.75) -> Tensor:
    """Positive pointwise mutual information ``(V, V)`` (sparse COO, float64) of a sparse count matrix,
    context probabilities ``∝ N(c)^alpha``. Only pairs that occur can have a positive PMI, so the
    result is as sparse as ``counts``."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    counts = counts.coalesce()
    (row, col), n = counts.indices(), counts.values().double()
    total = n.sum()
    if total == 0:
        return _sparse(counts.indices()[:, :0], n[:0], counts.shape[0])
    word = torch.zeros(counts.shape[0], dtype=torch.float64).index_add_(0, row, n) / total  # P(w)
    context = torch.zeros(counts.shape[1], dtype=torch.float64).index_add_(0, col, n) ** alpha
    context /= context.sum()  # P_alpha(c)
    pmi = torch.log(n / total) - torch.log(word[row]) - torch.log(context[col])
    keep = pmi > 0
    return _sparse(counts.indices()[:, keep], pmi[keep], counts.shape[0])


def randomized_svd(matrix: Tensor, rank: int, seed: int, oversamples: int = 10) -> tuple[Tensor, Tensor]:
    """The top ``rank`` left singular vectors ``U (V, rank)`` and singular values ``S (rank,)`` of a
    (sparse or dense) float64 ``matrix (V, W)``, by randomized range finding (Halko, Martinsson and
    Tropp 2011), as scikit-learn's ``randomized_svd`` computes them:

    * start from ``rank + oversamples`` Gaussian directions drawn by ``numpy.random.RandomState(seed)``
      (scikit-learn's draw for ``random_state=seed``: the same seed gives the same start);
    * power iterations (7, or 4 when ``rank`` is at least a tenth of the matrix size) sharpen the
      probe towards the top singular directions; re-orthonormalised with QR each time (scikit-learn
      uses LU, which spans the same columns);
    * an exact SVD of the small projected matrix ``Qᵀ M`` gives ``U = Q Û``;
    * each column's sign is chosen so that its entry of largest magnitude is positive (scikit-learn's
      ``svd_flip``): the result is one fixed answer, not one up to signs.
    """
    if rank < 1:
        raise ValueError(f"rank must be >= 1, got {rank}")
    size = min(matrix.shape)
    iterations = 7 if rank < 0.1 * size else 4
    transposed = matrix.t()
    if matrix.is_sparse:  # CSR multiplies 4x faster than COO
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)  # torch's notice
            matrix, transposed = matrix.to_sparse_csr(), transposed.coalesce().to_sparse_csr()
    probe = np.random.RandomState(seed).normal(size=(matrix.shape[1], rank + oversamples))
    q = torch.from_numpy(probe)  # (W, K)
    for _ in range(iterations):
        q = torch.linalg.qr(matrix @ q).Q  # (V, W) @ (W, K) -> (V, K)
        q = torch.linalg.qr(transposed @ q).Q  # (W, V) @ (V, K) -> (W, K)
    q = torch.linalg.qr(matrix @ q).Q  # (V, K): orthonormal basis of M's dominant range
    projected = (transposed @ q).T  # ((W, V) @ (V, K))ᵀ = Qᵀ M: (K, W)
    u_small, s, _ = torch.linalg.svd(projected, full_matrices=False)  # (K, K), (K,)
    u = q @ u_small  # (V, K) @ (K, K) -> (V, K)
    largest = u.abs().argmax(dim=0)  # (K,): the row of each column's largest entry
    u = u * torch.sign(u[largest, torch.arange(u.shape[1])])  # (V, K) * (K,)
    return u[:, :rank], s[:rank]


def ppmi_vectors(
    ids: Tensor | np.ndarray,
    valid: Tensor | np.ndarray,
    vocab_size: int,
    dim: int,
    *,
    window: int = 10,
    alpha: float = 0.75,
    seeds: Sequence[int] = (0,),
) -> list[Tensor]:
    """``(V, dim)`` float32 word vectors from the texts ``ids``/``valid`` (see the module docstring), one
    for each random seed in ``seeds`` (one per member of an ensemble): the co-occurrences are counted
    once, only the draws of the randomized SVD differ.

    Deterministic for given seeds. Unit standard deviation matches the classifier's ``N(0, 1)`` embedding
    initialisation (post 000), so the position encoding keeps its relative weight.
    """
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    counts = cooccurrence_counts(ids, valid, vocab_size, window)
    matrix = ppmi(counts, alpha)
    seen = torch.zeros(vocab_size, dtype=torch.float64).index_add_(0, counts.indices()[0], counts.values()) > 0
    rank = min(dim, vocab_size - 1)
    draws = []
    for seed in seeds:
        vectors = torch.zeros(vocab_size, dim, dtype=torch.float64)
        if seen.sum() > 1 and matrix._nnz() and rank >= 1:
            u, s = randomized_svd(matrix, rank, seed)
            e = (u * s.sqrt())[seen]  # (V_seen, rank)
            e = e - e.mean(dim=0)
            vectors[seen, :rank] = e / max(float(e.std(unbiased=False)), 1e-12)
        draws.append(vectors.float())
    return draws

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.data.cooccurrence import (
    cooccurrence_counts,
    ppmi,
    ppmi_vectors,
    randomized_svd,
)


def dense(m):
    return m.to_dense().numpy()


def test_counts_by_hand_window_one_and_two():
    ids, valid = np.array([[0, 1, 2]]), np.ones((1, 3), bool)
    one = dense(cooccurrence_counts(ids, valid, 4, 1))
    expected = np.zeros((4, 4))
    expected[0, 1] = expected[1, 0] = expected[1, 2] = expected[2, 1] = 1
    assert np.array_equal(one, expected)
    two = dense(cooccurrence_counts(ids, valid, 4, 2))
    expected[0, 2] = expected[2, 0] = 1
    assert np.array_equal(two, expected)


def test_padding_positions_never_count():
    ids = np.array([[0, 1, 3, 3], [2, 2, 3, 3]])  # 3 = pad
    valid = np.array([[True, True, False, False], [True, True, False, False]])
    counts = dense(cooccurrence_counts(ids, valid, 4, 3))
    assert counts[3].sum() == 0 and counts[:, 3].sum() == 0
    assert counts[0, 1] == counts[1, 0] == 1 and counts[2, 2] == 2  # a word next to itself counts both ways


@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 5), st.integers(0, 10_000))
def test_counts_are_symmetric_and_match_brute_force(n, t, window, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 5, (n, t))
    lengths = rng.integers(0, t + 1, n)
    valid = np.arange(t)[None, :] < lengths[:, None]
    counts = dense(cooccurrence_counts(torch.from_numpy(ids), torch.from_numpy(valid), 5, window))
    brute = np.zeros((5, 5))
    for row, length in zip(ids, lengths):
        for i in range(length):
            for j in range(length):
                if i != j and abs(i - j) <= window:
                    brute[row[i], row[j]] += 1
    assert np.array_equal(counts, brute) and np.array_equal(counts, counts.T)


def test_ppmi_by_hand():
    counts = dense(cooccurrence_counts(np.array([[0, 1, 2, 1]]), np.ones((1, 4), bool), 3, 1))
    got = dense(ppmi(torch.from_numpy(counts).to_sparse(), alpha=1.0))
    total = counts.sum()
    for w in range(3):
        for c in range(3):
            if counts[w, c]:
                pmi = math.log(counts[w, c] * total / (counts[w].sum() * counts[:, c].sum()))
                assert got[w, c] == pytest.approx(max(pmi, 0.0))
            else:
                assert got[w, c] == 0
    with pytest.raises(ValueError, match="alpha"):
        ppmi(torch.from_numpy(counts).to_sparse(), alpha=0.0)


def test_words_with_the_same_company_get_the_same_vector():
    # 0 and 1 are interchangeable (always between 2 and 3); 4..7 fill other contexts; 8 never occurs
    rows = [[2, 0, 3], [2, 1, 3], [4, 5, 6], [5, 6, 7], [2, 4, 7], [3, 5, 6]] * 5
    ids, valid = np.array(rows), np.ones((len(rows), 3), bool)
    (vectors,) = ppmi_vectors(ids, valid, 9, 4, window=1)
    assert vectors.shape == (9, 4) and vectors.dtype == torch.float32
    assert torch.allclose(vectors[0], vectors[1], atol=1e-5)
    assert torch.count_nonzero(vectors[8]) == 0  # never seen -> zero row
    seen = vectors[:8]
    assert seen.mean(0).abs().max() < 1e-5 and seen.std(unbiased=False).item() == pytest.approx(1.0, abs=1e-4)
    assert torch.equal(vectors, ppmi_vectors(ids, valid, 9, 4, window=1)[0])  # deterministic


def test_bad_arguments_are_named():
    ids, valid = np.array([[0, 1]]), np.ones((1, 2), bool)
    with pytest.raises(ValueError, match="window"):
        cooccurrence_counts(ids, valid, 2, 0)
    with pytest.raises(ValueError, match="token ids"):
        cooccurrence_counts(ids, valid, 1, 1)
    with pytest.raises(ValueError, match="dim"):
        ppmi_vectors(ids, valid, 2, 0)


def known_spectrum(rows, cols, values, seed=0):
    """A dense float64 matrix ``A diag(values) Bᵀ`` with orthonormal ``A (rows, k)``, ``B (cols, k)``."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.linalg.qr(torch.randn(rows, len(values), generator=gen, dtype=torch.float64)).Q
    b = torch.linalg.qr(torch.randn(cols, len(values), generator=gen, dtype=torch.float64)).Q
    return a @ torch.diag(torch.tensor(values, dtype=torch.float64)) @ b.T, a


def test_randomized_svd_finds_the_top_singular_pairs():
    values = [float(v) for v in np.linspace(20, 1, 30)]
    matrix, a = known_spectrum(200, 150, values)
    u, s = randomized_svd(matrix, 5, seed=7)
    assert u.shape == (200, 5) and s.shape == (5,)
    assert torch.allclose(s, torch.tensor(values[:5], dtype=torch.float64), rtol=1e-6)
    assert torch.allclose((u.T @ a[:, :5]).abs(), torch.eye(5, dtype=torch.float64), atol=1e-4)  # same directions
    largest = u.abs().argmax(dim=0)
    assert (u[largest, torch.arange(5)] > 0).all()  # each column's largest entry is positive: one fixed sign
    sparse_u, sparse_s = randomized_svd(matrix.to_sparse(), 5, seed=7)
    assert torch.allclose(sparse_u, u, atol=1e-10) and torch.allclose(sparse_s, s, rtol=1e-12)
    with pytest.raises(ValueError, match="rank"):
        randomized_svd(matrix, 0, seed=0)


def zipf_texts(n=300, t=40, vocab=400, seed=0):
    """Random texts whose word frequencies fall off like natural text (so the PPMI spectrum has gaps)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1)
    ids = rng.choice(vocab, size=(n, t), p=p / p.sum())
    valid = np.arange(t)[None, :] < rng.integers(5, t + 1, n)[:, None]
    return ids, valid


def test_the_vectors_are_scikit_learns():
    """The torch randomized SVD reproduces scikit-learn's ``randomized_svd`` for the same seed: the
    singular values, the vectors (signs included) and so the PPMI embeddings the published classifier
    results were measured with (then computed with scipy + scikit-learn)."""
    sk_svd = pytest.importorskip("sklearn.utils.extmath").randomized_svd
    sp = pytest.importorskip("scipy.sparse")
    ids, valid = zipf_texts()
    matrix = ppmi(cooccurrence_counts(ids, valid, 400, 3))
    rows, cols = matrix.indices().numpy()
    scipy_matrix = sp.csr_matrix((matrix.values().numpy(), (rows, cols)), shape=matrix.shape)
    seeds = [0, 1, 3_964_924_996]  # the last: an ensemble member's seed (32-bit)
    for seed in seeds:
        u, s = randomized_svd(matrix, 16, seed)
        sk_u, sk_s, _ = sk_svd(scipy_matrix, 16, random_state=seed)
        assert np.allclose(s.numpy(), sk_s, rtol=1e-10, atol=0)
        assert np.allclose(u.numpy(), sk_u, atol=1e-8)
    seen = np.bincount(ids[valid], minlength=400) > 0  # every word that occurs (in a text of 2+ tokens here)
    for seed, vectors in zip(seeds, ppmi_vectors(ids, valid, 400, 16, window=3, seeds=seeds)):
        sk_u, sk_s, _ = sk_svd(scipy_matrix, 16, random_state=seed)
        e = (sk_u * np.sqrt(sk_s))[seen]  # what ppmi_vectors did with scikit-learn's output
        e = e - e.mean(axis=0)
        assert np.allclose(vectors.numpy()[seen], e / e.std(), atol=1e-6)
        assert not vectors.numpy()[~seen].any()

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.data.cooccurrence import cooccurrence_counts, ppmi, ppmi_vectors


def dense(m):
    return m.toarray()


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
    import scipy.sparse as sp

    got = dense(ppmi(sp.csr_matrix(counts), alpha=1.0))
    total = counts.sum()
    for w in range(3):
        for c in range(3):
            if counts[w, c]:
                pmi = math.log(counts[w, c] * total / (counts[w].sum() * counts[:, c].sum()))
                assert got[w, c] == pytest.approx(max(pmi, 0.0))
            else:
                assert got[w, c] == 0
    with pytest.raises(ValueError, match="alpha"):
        ppmi(sp.csr_matrix(counts), alpha=0.0)


def test_words_with_the_same_company_get_the_same_vector():
    # 0 and 1 are interchangeable (always between 2 and 3); 4..7 fill other contexts; 8 never occurs
    rows = [[2, 0, 3], [2, 1, 3], [4, 5, 6], [5, 6, 7], [2, 4, 7], [3, 5, 6]] * 5
    ids, valid = np.array(rows), np.ones((len(rows), 3), bool)
    vectors = ppmi_vectors(ids, valid, 9, 4, window=1)
    assert vectors.shape == (9, 4) and vectors.dtype == torch.float32
    assert torch.allclose(vectors[0], vectors[1], atol=1e-5)
    assert torch.count_nonzero(vectors[8]) == 0  # never seen -> zero row
    seen = vectors[:8]
    assert seen.mean(0).abs().max() < 1e-5 and seen.std(unbiased=False).item() == pytest.approx(1.0, abs=1e-4)
    assert torch.equal(vectors, ppmi_vectors(ids, valid, 9, 4, window=1))  # deterministic


def test_bad_arguments_are_named():
    ids, valid = np.array([[0, 1]]), np.ones((1, 2), bool)
    with pytest.raises(ValueError, match="window"):
        cooccurrence_counts(ids, valid, 2, 0)
    with pytest.raises(ValueError, match="token ids"):
        cooccurrence_counts(ids, valid, 1, 1)
    with pytest.raises(ValueError, match="dim"):
        ppmi_vectors(ids, valid, 2, 0)

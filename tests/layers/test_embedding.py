import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.layers import (
    BigramEmbedding,
    LearnedPositionEmbedding,
    SinusoidalPositionEncoding,
    TokenEmbedding,
)


def test_lookup_returns_rows_and_batches():
    emb = TokenEmbedding(10, 4)
    ids = torch.tensor([[1, 2, 1], [0, 9, 3]])
    out = emb(ids)
    assert out.shape == (2, 3, 4)
    assert torch.equal(out[0, 0], emb.weight[1]) and torch.equal(out[1, 1], emb.weight[9])
    assert emb(torch.tensor([3])).shape == (1, 4)


def test_gradient_is_scatter_add_with_repeats_accumulating():
    emb = TokenEmbedding(5, 3)
    ids = torch.tensor([[2, 2, 4, 2]])
    g = torch.randn(1, 4, 3)
    (emb(ids) * g).sum().backward()
    expected = torch.zeros(5, 3)
    expected.index_add_(0, ids[0], g[0])
    assert torch.allclose(emb.weight.grad, expected)
    assert torch.allclose(emb.weight.grad[2], g[0, 0] + g[0, 1] + g[0, 3])
    assert (emb.weight.grad[[0, 1, 3]] == 0).all()


def test_out_of_range_ids_are_named():
    emb = TokenEmbedding(5, 3)
    with pytest.raises(ValueError, match="token id 5 .* vocabulary of 5"):
        emb(torch.tensor([[0, 5]]))
    with pytest.raises(ValueError, match="token id -1"):
        emb(torch.tensor([[-1]]))


def test_sinusoidal_values_follow_seed_formula_with_one_based_positions():
    pe = SinusoidalPositionEncoding(6, 20)
    table = pe(20)
    for j in (1, 7, 20):  # seed positions count from 1
        for i in range(3):
            angle = j / 10000 ** (2 * i / 6)
            assert math.isclose(table[j - 1, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(table[j - 1, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)
    assert not any(p.requires_grad for p in pe.parameters())
    assert pe.weight.shape == (20, 6)


def test_sinusoidal_error_beyond_max_length():
    pe = SinusoidalPositionEncoding(4)
    assert pe.max_length == 1000
    with pytest.raises(ValueError, match="1001 exceeds the maximum position encoding length 1000"):
        pe(1001)


def test_learned_position_embedding_is_trainable_and_bounded():
    pe = LearnedPositionEmbedding(8, 4)
    assert pe(8).shape == (8, 4) and pe.weight.requires_grad
    assert torch.equal(pe(2, offset=3), pe.weight[3:5])
    with pytest.raises(ValueError, match="context length 8"):
        pe(9)


def test_bigram_embedding_gives_each_word_pair_its_own_row():
    table = BigramEmbedding(buckets=1000, dim=4, vocab_size=10)
    assert torch.equal(table(torch.tensor([[1, 2, 3]])), torch.zeros(1, 3, 4))  # starts at zero
    with torch.no_grad():
        table.weight.copy_(torch.randn(1000, 4))
    ids = torch.tensor([[1, 2, 3, 2, 3], [7, 2, 3, 1, 2]])
    rows = table.rows(ids)  # (B, T)
    assert rows[0, 2] == rows[0, 4] == rows[1, 2]  # the pair (2, 3) wherever it occurs
    assert rows[0, 1] != rows[1, 1]  # (1, 2) vs (7, 2): the same word after another one
    assert rows[0, 0] != rows[1, 3]  # the first word's pair is (start, 1), not (3, 1)
    assert int(rows[0, 0]) == (10 * BigramEmbedding.MULTIPLIER + 1) % 1000
    assert torch.equal(table(ids), table.weight[rows])  # (B, T, C)


def test_bigram_embedding_rejects_an_empty_table():
    with pytest.raises(ValueError, match="buckets"):
        BigramEmbedding(0, 4, 10)


def test_id_range_is_checked_eagerly_and_left_to_the_tokenizer_inside_compile(monkeypatch) -> None:
    """Eager calls name an id outside the vocabulary; inside ``torch.compile`` (training on the run's own
    tokenizer's ids) the check would read the ids back to the host at every step, so it is skipped."""
    from transformers_lite.layers.embedding import check_ids

    bad = torch.tensor([[0, 3, 7]])
    with pytest.raises(ValueError, match="token id 7 is out of range for a vocabulary of 5"):
        check_ids(bad, 5)
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)
    check_ids(bad, 5)  # no host read-back: nothing raised


@settings(max_examples=20, deadline=None)
@given(vocab=st.integers(1, 70))
def test_the_exact_bigram_table_gives_every_pair_its_own_row(vocab):
    """``buckets=None``: row ``previous · V + token``; the (V + 1) · V pairs (the start marker V as a
    previous token included) fill the table exactly once each, so no two pairs ever share a row."""
    table = BigramEmbedding(None, 2, vocab)
    assert table.weight.shape == ((vocab + 1) * vocab, 2) and not table.weight.any()
    previous = torch.arange(vocab + 1).repeat_interleave(vocab)  # every (p, t)
    token = torch.arange(vocab).repeat(vocab + 1)
    rows = table.rows(token[:, None], before=previous[:, None])[:, 0]  # one-token sequences after p
    assert torch.equal(rows.sort().values, torch.arange((vocab + 1) * vocab))
    ids = torch.randint(0, vocab, (3, 5))
    assert torch.equal(table.rows(ids)[:, 0], vocab * vocab + ids[:, 0])  # the first reads the start marker
    assert torch.equal(table.rows(ids)[:, 1:], ids[:, :-1] * vocab + ids[:, 1:])

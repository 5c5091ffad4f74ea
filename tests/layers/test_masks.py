import pytest
import torch

from transformers_lite.layers.masks import (
    attention_mask,
    causal_mask,
    padding_mask,
    padding_mask_from_ids,
    with_look_ahead,
)


def test_causal_mask_is_lower_triangular():
    m = causal_mask(4)
    assert m.dtype == torch.bool
    assert torch.equal(m, torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool))


def test_causal_mask_with_offset_matches_last_rows_of_full_mask():
    full = causal_mask(7)
    assert torch.equal(causal_mask(3, 7), full[-3:])
    assert causal_mask(1, 5).all()


def test_causal_mask_rejects_bad_lengths():
    with pytest.raises(ValueError, match="query_len=5, key_len=3"):
        causal_mask(5, 3)


def test_padding_mask_from_lengths_and_ids():
    m = padding_mask([2, 0, 3], 4)
    assert m.tolist() == [[1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0]]
    ids = torch.tensor([[5, 6, 0], [7, 0, 0]])
    assert padding_mask_from_ids(ids, 0).tolist() == [[1, 1, 0], [1, 0, 0]]
    with pytest.raises(ValueError, match="exceeds max_len=2"):
        padding_mask([3], 2)


def test_attention_mask_combines_padding_and_causal():
    valid = torch.tensor([[True, True, False]])
    m = attention_mask(valid, causal=True)
    assert m.shape == (1, 1, 3, 3)
    expected = causal_mask(3) & valid[0][None, :]
    assert torch.equal(m[0, 0], expected)
    assert attention_mask(None) is None
    assert attention_mask(valid).shape == (1, 1, 1, 3)
    with pytest.raises(ValueError, match="bool"):
        attention_mask(valid.long())


def test_with_look_ahead_uses_the_kernel_flag_only_when_it_means_the_same():
    assert with_look_ahead(None, False, 4, 4) == (None, False)
    assert with_look_ahead(None, True, 4, 4) == (None, True)  # square, nothing else masked: is_causal
    assert with_look_ahead(None, True, 1, 9) == (None, False)  # one new query sees every cached key
    mask, flag = with_look_ahead(None, True, 2, 5)  # the last 2 of 5 positions
    assert not flag and torch.equal(mask, causal_mask(2, 5))
    pad = torch.tensor([[True, True, True, False]])[:, None, None, :]  # (B, 1, 1, S)
    mask, flag = with_look_ahead(pad, True, 4, 4)
    assert not flag and torch.equal(mask[0, 0], causal_mask(4) & pad[0, 0])

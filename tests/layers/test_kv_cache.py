import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.layers import KVCache


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(1, 5),
    filled=st.integers(0, 6),
    picks=st.lists(st.integers(0, 4), min_size=1, max_size=6),
)
def test_reorder_keeps_the_chosen_rows_of_what_is_cached(batch: int, filled: int, picks: list[int]) -> None:
    """Reordering moves the filled positions of the chosen rows, whether the batch keeps its size
    (beams swap within a sentence: rewritten in place) or shrinks or grows (a new buffer)."""
    index = torch.tensor([p % batch for p in picks])
    cache = KVCache(batch, 2, 6, 3)
    k, v = torch.randn(batch, 2, filled, 3), torch.randn(batch, 2, filled, 3)
    cache.append(k, v)
    cache.reorder(index)
    assert torch.equal(cache.keys(), k[index])
    assert torch.equal(cache.values(), v[index])
    if filled < 6:  # appending after a reorder continues every kept row
        k2, v2 = torch.randn(len(index), 2, 1, 3), torch.randn(len(index), 2, 1, 3)
        keys, values = cache.append(k2, v2)
        assert torch.equal(keys, torch.cat([k[index], k2], dim=2))
        assert torch.equal(values, torch.cat([v[index], v2], dim=2))

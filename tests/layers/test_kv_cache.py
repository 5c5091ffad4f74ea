import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.layers import KVCache


def fill(cache: KVCache, ks: list[torch.Tensor], vs: list[torch.Tensor]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Every block writes its keys/values, then the write position moves, as a model's forward does."""
    out = [cache.update(layer, torch.stack((k, v))) for layer, (k, v) in enumerate(zip(ks, vs))]
    cache.advance(ks[0].shape[2])
    return out


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(1, 5),
    filled=st.integers(0, 6),
    picks=st.lists(st.integers(0, 4), min_size=1, max_size=6),
    layers=st.integers(1, 3),
)
def test_reorder_keeps_the_chosen_rows_of_what_is_cached(
    batch: int, filled: int, picks: list[int], layers: int
) -> None:
    """Reordering moves the filled positions of the chosen rows of every block, whether the batch keeps
    its size (beams swap within a sentence: rewritten in place) or shrinks or grows (a new buffer)."""
    index = torch.tensor([p % batch for p in picks])
    cache = KVCache(layers, batch, 2, 6, 3)
    ks = [torch.randn(batch, 2, filled, 3) for _ in range(layers)]
    vs = [torch.randn(batch, 2, filled, 3) for _ in range(layers)]
    fill(cache, ks, vs)
    cache.reorder(index)
    assert cache.length == filled and cache.batch == len(index)
    if filled < 6:  # writing after a reorder continues every kept row of every block
        ks2 = [torch.randn(len(index), 2, 1, 3) for _ in range(layers)]
        vs2 = [torch.randn(len(index), 2, 1, 3) for _ in range(layers)]
        for layer, (keys, values) in enumerate(fill(cache, ks2, vs2)):
            assert torch.equal(keys, torch.cat([ks[layer][index], ks2[layer]], dim=2))
            assert torch.equal(values, torch.cat([vs[layer][index], vs2[layer]], dim=2))


def test_one_buffer_holds_every_block_and_a_full_cache_refuses_more():
    cache = KVCache(4, 2, 3, 5, 8)
    assert cache.buffer.shape == (4, 2, 2, 3, 5, 8)
    k = torch.ones(2, 3, 5, 8)
    for layer in range(4):
        cache.update(layer, torch.stack((k * layer, k * -layer)))
    cache.advance(5)
    assert torch.equal(cache.buffer[3, 1], k * -3)
    try:
        cache.update(0, torch.stack((k, k))[:, :, :, :1])
    except ValueError as err:
        assert "overflow: 5 cached + 1 new > capacity 5" in str(err)
    else:
        raise AssertionError("a full cache accepted more")

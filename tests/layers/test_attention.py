import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.layers import CrossAttention, KVCache, RotaryEmbedding, SelfAttention, scaled_dot_attention
from transformers_lite.layers.masks import attention_mask, causal_mask


def explicit(module, *args, **kwargs):
    """Run ``module`` on its explicit (teaching) path; return ``(out, weights)``."""
    module.record_weights = True
    try:
        return module(*args, **kwargs), module.weights
    finally:
        module.record_weights, module.weights = False, None


def test_scaled_dot_attention_matches_hand_computation():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    v = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    out, w = scaled_dot_attention(q, k, v)
    s = torch.tensor([[1.0, 0.0], [0.0, 2.0]]) / math.sqrt(2)
    expected_w = torch.softmax(s, dim=-1)
    assert torch.allclose(w, expected_w)
    assert torch.allclose(out, expected_w @ v)


def test_weights_rows_sum_to_one_and_masked_cells_are_zero():
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 4)
    mask = causal_mask(5)
    _, w = scaled_dot_attention(q, k, v, mask)
    assert torch.allclose(w.sum(-1), torch.ones(2, 3, 5))
    assert (w[..., ~mask] == 0).all()


def test_fully_masked_rows_give_zeros_not_nan_in_both_paths():
    mha = SelfAttention(2, 8)
    x = torch.randn(2, 4, 8, requires_grad=True)
    mask = torch.ones(2, 1, 4, 4, dtype=torch.bool)
    mask[0, 0, 2] = False  # query 2 of sample 0 may attend to nothing
    for record in (True, False):
        mha.record_weights = record
        out = mha(x, mask)
        assert not torch.isnan(out).any()
        out.sum().backward()
        assert not torch.isnan(x.grad).any()
        x.grad = None
    _, w = scaled_dot_attention(
        torch.randn(1, 2, 4), torch.randn(1, 3, 4), torch.randn(1, 3, 4), torch.zeros(1, 2, 3, dtype=torch.bool)
    )
    assert torch.equal(w, torch.zeros(1, 2, 3))


@settings(max_examples=25, deadline=None)
@given(
    b=st.integers(1, 3),
    t=st.integers(1, 6),
    s=st.integers(1, 6),
    h=st.sampled_from([1, 2, 4]),
    pad=st.integers(0, 5),
    bias=st.booleans(),
)
def test_fused_equals_explicit_for_self_and_cross_attention(b, t, s, h, pad, bias):
    torch.manual_seed(b * 100 + t * 10 + s)
    cross, selfa = CrossAttention(h, 8, bias=bias).eval(), SelfAttention(h, 8, bias=bias).eval()
    x, mem = torch.randn(b, t, 8), torch.randn(b, s, 8)
    lengths = torch.tensor([max(1, s - pad)] * b)
    valid = torch.arange(s)[None, :] < lengths[:, None]
    mask = attention_mask(valid)
    out, weights = explicit(cross, x, mem, mask)
    assert weights.shape == (b, h, t, s) and cross.weights is None  # nothing kept outside recording
    assert torch.allclose(out, cross(x, mem, mask), atol=1e-5)
    # precomputed encoder keys/values give the same answer as the memory itself
    assert torch.allclose(cross(x, mask=mask, memory_kv=cross.memory_keys_values(mem)), out, atol=1e-6)
    # self-attention with the look-ahead mask: explicit (materialised mask) vs the fused kernel's flag
    out, weights = explicit(selfa, x, causal=True)
    assert torch.allclose(out, selfa(x, causal=True), atol=1e-5)
    assert (weights[..., ~causal_mask(t)] == 0).all()


def test_fused_path_applies_dropout_in_training_only():
    mha = SelfAttention(2, 8, dropout=0.5)
    x = torch.randn(1, 6, 8)
    mha.eval()
    assert torch.equal(mha(x), mha(x))
    mha.train()
    assert not torch.allclose(mha(x), mha(x))


def test_heads_are_independent():
    """Changing head 1's Q/K/V weights leaves head 0's weights alone, and with head 1 cut off from the
    output projection, the output too."""
    mha = SelfAttention(2, 8)
    x = torch.randn(1, 5, 8)
    with torch.no_grad():
        mha.out.weight[:, 4:] = 0.0  # head 1's slice of the merged heads does not reach the output
    out1, w1 = explicit(mha, x)
    with torch.no_grad():
        for part in range(3):  # Q, K, V rows of head 1 are rows 4..8 of each part
            mha.qkv.weight[part * 8 + 4 : part * 8 + 8] += torch.randn(4, 8)
    out2, w2 = explicit(mha, x)
    assert torch.allclose(w1[:, 0], w2[:, 0]) and not torch.allclose(w1[:, 1], w2[:, 1])
    assert torch.allclose(out1, out2)


def test_forward_hooks_see_every_projection():
    mha = CrossAttention(2, 8)
    seen = []
    for name, module in mha.named_modules():
        if name:
            module.register_forward_hook(lambda m, i, o, name=name: seen.append(name))
    mha(torch.randn(1, 3, 8), torch.randn(1, 4, 8))
    assert sorted(seen) == ["key_value", "out", "query"]


def test_non_divisible_heads_error_names_both_numbers():
    with pytest.raises(ValueError, match=r"dim=10 is not divisible by n_heads=4"):
        SelfAttention(4, 10)


def test_wrong_mask_shape_and_dtype_are_rejected():
    mha = SelfAttention(2, 8)
    x = torch.randn(2, 4, 8)
    with pytest.raises(ValueError, match="does not broadcast"):
        mha(x, torch.ones(2, 1, 4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="bool"):
        mha(x, torch.ones(4, 4))
    with pytest.raises(ValueError, match="memory batch 3 does not match the input batch 2"):
        CrossAttention(2, 8)(x, torch.randn(3, 5, 8))


def test_kv_cache_incremental_equals_full_causal():
    mha = SelfAttention(2, 8).eval()
    x = torch.randn(2, 6, 8)
    full = mha(x, causal=True)
    cache = KVCache(2, 2, 6, 4)
    prefix = mha(x[:, :3], causal=True, cache=cache)  # prefill 3 then one at a time
    steps = [prefix] + [mha(x[:, i : i + 1], causal=True, cache=cache) for i in range(3, 6)]
    assert torch.allclose(torch.cat(steps, 1), full, atol=1e-6)
    with pytest.raises(ValueError, match="overflow"):
        mha(x[:, :1], causal=True, cache=cache)


def test_cached_prefill_after_a_prefix_uses_the_offset_look_ahead_mask():
    mha = SelfAttention(2, 8).eval()
    x = torch.randn(1, 7, 8)
    cache = KVCache(1, 2, 7, 4)
    first = mha(x[:, :3], causal=True, cache=cache)
    rest = mha(x[:, 3:], causal=True, cache=cache)  # 4 queries over 7 keys
    assert torch.allclose(torch.cat([first, rest], 1), mha(x, causal=True), atol=1e-6)


def test_rope_makes_scores_depend_on_relative_position_only():
    rope = RotaryEmbedding(8, 64)
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)
    s1 = (rope(q, 3) * rope(k, 1)).sum()
    s2 = (rope(q, 10) * rope(k, 8)).sum()
    assert torch.allclose(s1, s2, atol=1e-5)
    assert torch.allclose(rope(q, 0), q)  # position 0 is the identity rotation
    with pytest.raises(ValueError, match="max_length=64"):
        rope(q, 64)


def test_gradcheck_attention_float64():
    cross, selfa = CrossAttention(2, 4).double(), SelfAttention(2, 4).double()
    x = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    mem = torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[[[True, False]]]])
    cross.record_weights = True
    assert torch.autograd.gradcheck(lambda a, b: cross(a, b, mask), (x, mem))
    assert torch.autograd.gradcheck(lambda a: selfa(a, causal=True), (x,))

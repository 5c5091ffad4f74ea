import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.layers import NO_TRACE, Attention, KVCache, RotaryEmbedding, Trace, scaled_dot_attention
from transformers_lite.layers.masks import attention_mask, causal_mask


def explicit(call, *args, **kwargs):
    """Run an attention call on its explicit (traced) path; return ``(out, weights)``: the weights come
    back through the trace, nothing is kept on the module."""
    trace = Trace()
    return call(*args, trace=trace, **kwargs), trace["weights"]


def SelfAttention(h, dim, **kw):  # noqa: N802 - one module serves both kinds
    return Attention(h, dim, **kw)


def cross_call(module):
    """Cross-attention as a decoder block calls it: queries from ``x``, keys/values from ``memory``."""
    return lambda x, memory, mask=None, trace=NO_TRACE: module.cross(x, module.memory_keys_values(memory), mask, trace)


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
    for trace in (Trace(), NO_TRACE):  # explicit, fused
        out = mha(x, mask, trace=trace)
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
    attention = Attention(h, 8, bias=bias).eval()  # one module: self-attention, and cross-attention via .cross
    cross = cross_call(attention)
    x, mem = torch.randn(b, t, 8), torch.randn(b, s, 8)
    lengths = torch.tensor([max(1, s - pad)] * b)
    valid = torch.arange(s)[None, :] < lengths[:, None]
    mask = attention_mask(valid)
    out, weights = explicit(cross, x, mem, mask)
    assert weights.shape == (b, h, t, s)
    assert not any(isinstance(v, torch.Tensor) for v in vars(attention).values())  # nothing kept on the module
    assert torch.allclose(out, cross(x, mem, mask), atol=1e-5)
    # cross-attention's queries use the Q rows, its keys and values the K and V rows of the same Dense
    q_rows = attention.qkv.weight[:8]
    trace = Trace()
    cross(x, mem, mask, trace=trace)
    expected_q = (x @ q_rows.T + (attention.qkv.bias[:8] if bias else 0)).view(b, t, h, 8 // h).transpose(1, 2)
    assert torch.allclose(trace["q"], expected_q, atol=1e-6)
    # self-attention with the look-ahead mask: explicit (materialised mask) vs the fused kernel's flag
    out, weights = explicit(attention, x, causal=True)
    assert torch.allclose(out, attention(x, causal=True), atol=1e-5)
    assert (weights[..., ~causal_mask(t)] == 0).all()


def test_every_step_of_the_equations_is_traced_with_its_shape():
    mha = SelfAttention(2, 8).eval()
    x = torch.randn(3, 5, 8)
    trace = Trace()
    out = mha(x, causal=True, trace=trace)
    shapes = {name: tuple(t.shape) for name, t in trace.tensors.items()}
    assert shapes == {
        "q": (3, 2, 5, 4),
        "k": (3, 2, 5, 4),
        "v": (3, 2, 5, 4),
        "scores": (3, 2, 5, 5),
        "scaled": (3, 2, 5, 5),
        "mask": (3, 2, 5, 5),
        "masked": (3, 2, 5, 5),
        "weights": (3, 2, 5, 5),
        "heads": (3, 2, 5, 4),
        "merged": (3, 5, 8),
        "out": (3, 5, 8),
    }
    assert torch.allclose(trace["scaled"], trace["scores"] / 2.0)  # sqrt(D) = sqrt(4)
    future = ~causal_mask(5)
    assert (trace["mask"][..., future] == -math.inf).all() and (trace["mask"][..., ~future] == 0).all()  # M: 0 / −∞
    hidden = trace["masked"][..., future]  # S + M: the lowest float where M is −∞, the scaled scores elsewhere
    assert (hidden == torch.finfo(hidden.dtype).min).all()
    assert torch.equal(trace["masked"][..., ~future], trace["scaled"][..., ~future])
    assert torch.equal(trace["out"], out)


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
    out2, w2 = explicit(mha, x)  # traced: the weights come back from the forward
    assert torch.allclose(w1[:, 0], w2[:, 0]) and not torch.allclose(w1[:, 1], w2[:, 1])
    assert torch.allclose(out1, out2)


def test_an_edit_in_the_trace_changes_the_forward_without_touching_the_weights():
    mha = SelfAttention(2, 8).eval()
    x = torch.randn(1, 4, 8)
    before = {k: v.clone() for k, v in mha.state_dict().items()}

    def head_off(heads):  # (B, H, T, D): switch head 1 off
        heads = heads.clone()
        heads[:, 1] = 0.0
        return heads

    edited = mha(x, trace=Trace({"heads": head_off}))
    with torch.no_grad():
        mha.out.weight[:, 4:] = 0.0  # the same thing done to the weights: head 1's slice never reaches the output
    assert torch.allclose(edited, mha(x), atol=1e-6)
    mha.load_state_dict(before)
    assert not torch.allclose(edited, mha(x))


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
        cross_call(Attention(2, 8))(x, torch.randn(3, 5, 8))


def cached(mha, cache, chunk):
    out = mha(chunk, causal=True, cache=cache)
    cache.advance(chunk.shape[1])  # what a model does once every block has written
    return out


def test_kv_cache_incremental_equals_full_causal():
    mha = SelfAttention(2, 8).eval()
    x = torch.randn(2, 6, 8)
    full = mha(x, causal=True)
    cache = KVCache(1, 2, 2, 6, 4)
    prefix = cached(mha, cache, x[:, :3])  # prefill 3 then one at a time
    steps = [prefix] + [cached(mha, cache, x[:, i : i + 1]) for i in range(3, 6)]
    assert torch.allclose(torch.cat(steps, 1), full, atol=1e-6)
    with pytest.raises(ValueError, match="overflow"):
        mha(x[:, :1], causal=True, cache=cache)


def test_cached_prefill_after_a_prefix_uses_the_offset_look_ahead_mask():
    mha = SelfAttention(2, 8).eval()
    x = torch.randn(1, 7, 8)
    cache = KVCache(1, 1, 2, 7, 4)
    first = cached(mha, cache, x[:, :3])
    rest = cached(mha, cache, x[:, 3:])  # 4 queries over 7 keys
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
    attention = Attention(2, 4).double()
    cross, selfa = cross_call(attention), attention
    x = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    mem = torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[[[True, False]]]])
    assert torch.autograd.gradcheck(lambda a, b: cross(a, b, mask, trace=Trace()), (x, mem))
    assert torch.autograd.gradcheck(lambda a: selfa(a, causal=True), (x,))


@pytest.mark.parametrize("norm, rope", [("layer", False), ("rms", True)])
def test_qk_norm_normalises_each_heads_queries_and_keys_before_the_scores(norm, rope):
    """QK-norm: Q and K, per head, through the model's norm over their D channels, then (rotary) turned,
    then the scores; the fused kernel agrees with the traced path, and a KV cache with the full forward."""
    from transformers_lite.layers import NormSpec

    spec = NormSpec(norm)
    attention = Attention(2, 8, rope=RotaryEmbedding(4, 16) if rope else None, qk_norm=spec).eval()
    with torch.no_grad():
        attention.q_norm.weight.uniform_(0.5, 2)
    x = torch.randn(2, 6, 8) * 5
    trace = Trace()
    out = attention(x, causal=True, trace=trace)
    q = trace["q"]
    centred = q - q.mean(-1, keepdim=True) if norm == "layer" else q
    scale = torch.sqrt((centred * centred).mean(-1, keepdim=True) + spec.eps)
    expected = attention.q_norm.weight * centred / scale + (attention.q_norm.bias if norm == "layer" else 0)
    assert torch.allclose(trace["q_norm"], expected, atol=1e-5)
    last = "rotated" if rope else "norm"
    assert trace.records["scores"].read_steps == (f"q_{last}", f"k_{last}")
    assert trace.records["scores"].step.ours.startswith("Q\u0302" + ("′" if rope else ""))
    assert torch.allclose(out, attention(x, causal=True), atol=1e-5)  # fused == explicit
    cache = KVCache(1, 2, 2, 6, 4)
    steps = [cached(attention, cache, x[:, :2])] + [cached(attention, cache, x[:, i : i + 1]) for i in range(2, 6)]
    assert torch.allclose(torch.cat(steps, 1), out, atol=1e-5)
    rows = [name for _, name, *_ in attention.summary_rows(lambda params: 0)]
    assert ["q_norm", "k_norm"] == [r for r in rows if r.endswith("_norm")]
    with pytest.raises(ValueError, match="cross-attention has none"):
        Attention(2, 8, kind="cross", qk_norm=spec)


@pytest.mark.parametrize("norm", ["layer", "rms"])
def test_a_gpt_with_qk_norm_has_a_hand_rule_at_every_step_and_gpt2_lacks_it(norm):
    from types import SimpleNamespace

    from transformers_lite import GeneratorConfig, build_model
    from transformers_lite.families import FAMILIES
    from transformers_lite.inspect.backward import trace_backward
    from transformers_lite.interop.gpt2 import gpt2_differences
    from transformers_lite.tokenizers.char import CharTokenizer

    text = "To be, or not to be"
    tokenizer = CharTokenizer(sorted(set(text)))
    config = GeneratorConfig(
        vocab_size=len(tokenizer), dim=16, n_heads=2, dropout=0.0, qk_norm=True, norm=norm, norm_first=True
    )
    torch.manual_seed(0)
    model = build_model(config).eval()
    run = SimpleNamespace(model=model, config=config, tokenizer=tokenizer, family=FAMILIES["generator"])
    result = trace_backward(run, text)
    assert {f"blocks.{i}.attention.{s}_norm" for i in range(3) for s in "qk"} <= set(result.checks)
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(result.checks)
    worst = {n: c["hand_max_diff"] for n, c in result.checks.items() if c["hand_max_diff"] > 1e-5}
    assert not worst, worst
    ids = torch.tensor(tokenizer.encode(text))
    sampled = model.weights(detach=True)  # decoding reads the norms too
    assert sampled.blocks[0].attention.q_norm is not None
    shaped = GeneratorConfig(norm_first=True, final_norm=True, head_bias=False, activation="gelu_tanh", qk_norm=True)
    assert gpt2_differences(shaped) == ["qk_norm=True (GPT-2: False)"]
    assert torch.isfinite(model(ids[None])).all()

"""The norms: LayerNorm (the posts') and RMSNorm, one table; each is its equation, its step and its hand rule."""

from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite import GeneratorConfig, build_model, summary
from transformers_lite.families import FAMILIES
from transformers_lite.inspect.backward import trace_backward
from transformers_lite.interop.gpt2 import gpt2_differences
from transformers_lite.layers import Norm, NormSpec, Trace
from transformers_lite.tokenizers.char import CharTokenizer

TEXT = "To be, or not to be, that is the question."
TOKENIZER = CharTokenizer(sorted(set(TEXT)))


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 6), dim=st.integers(1, 12), eps=st.sampled_from([1e-5, 1e-6, 0.1]), seed=st.integers(0, 99))
def test_rms_norm_divides_each_row_by_its_root_mean_square(rows, dim, eps, seed):
    torch.manual_seed(seed)
    norm = Norm(dim, NormSpec("rms", eps))
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2)
    x = torch.randn(rows, dim) * 3
    expected = norm.weight * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)  # no mean taken away, no β
    assert torch.allclose(norm(x), expected, atol=1e-5)
    assert norm.bias is None and [n for n, _ in norm.named_parameters()] == ["weight"]


def test_an_unknown_norm_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown norm 'batch'; choose one of layer, rms"):
        NormSpec("batch")
    with pytest.raises(ValueError, match="norm"):
        GeneratorConfig(norm="batch")


def _run(**fields) -> SimpleNamespace:
    config = GeneratorConfig(vocab_size=len(TOKENIZER), max_length=64, dropout=0.0, dim=16, n_heads=2, **fields)
    torch.manual_seed(0)
    return SimpleNamespace(
        model=build_model(config).eval(), config=config, tokenizer=TOKENIZER, family=FAMILIES["generator"]
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_gpt_with_rms_norms_declares_them_and_every_step_has_its_hand_rule(norm_first):
    run = _run(norm="rms", norm_first=norm_first, final_norm=True, dim_hidden=32, n_blocks=2)
    trace = Trace()
    with torch.no_grad():
        run.model(torch.tensor([TOKENIZER.encode(TEXT[:10])]), trace=trace)
    norms = [r.step for r in trace.records.values() if r.step.kind.startswith("norm:")]
    assert len(norms) == 5 and all(s.kind == "norm:rms" and s.ours.startswith("RMS(") for s in norms)
    q = trace.records["blocks.0.attention.q"].step.ours
    assert q.startswith("Q = RMS(x) W_Qᵀ" if norm_first else "Q = x W_Qᵀ")
    result = trace_backward(run, TEXT[:12])
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(result.checks)
    assert result.checks["param:final_norm.weight"]["kinds"] == ["norm:rms"]
    worst = {n: c["hand_max_diff"] for n, c in result.checks.items() if c["hand_max_diff"] > 1e-5}
    assert not worst, worst


def test_rms_norms_hold_no_bias_and_gpt2_has_none():
    layer, rms = (build_model(GeneratorConfig(norm=n, norm_first=True, final_norm=True)) for n in ("layer", "rms"))
    gone = sum(p.numel() for p in layer.parameters()) - sum(p.numel() for p in rms.parameters())
    assert gone == 32 * (2 * 3 + 1)  # one β of 32 per norm: two per block, three blocks, and the final norm
    assert "RMSNorm(32)" in summary(rms) and "Residual(RMSNorm(32), Dropout(0.1), pre-norm)" in summary(rms)
    shaped = dict(norm_first=True, final_norm=True, head_bias=False, activation="gelu_tanh")
    assert gpt2_differences(GeneratorConfig(norm="rms", **shaped)) == ["norm='rms' (GPT-2: 'layer')"]

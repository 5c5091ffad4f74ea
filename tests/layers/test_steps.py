"""Each layer declares the steps it computes: every step of every preset's model has a kind, and its
equation says what *that* model computes (its input, its bias, its activation, d_h, a tied table)."""

import math

import pytest
import torch

from transformers_lite import build_model, get_preset
from transformers_lite.layers import KINDS, Step, Trace
from transformers_lite.layers.trace import NO_TRACE

VOCAB = 40
PRESETS = ["post-gpt", "baby-gpt", "post-classifier", "classifier", "seq2seq-small"]


def _traced(preset: str) -> tuple[object, torch.nn.Module, Trace]:
    """A preset's model (its vocabulary made small) and the trace of one forward over 12 tokens."""
    config = get_preset(preset).model
    sizes = {f: VOCAB for f in ("vocab_size", "src_vocab_size", "tgt_vocab_size") if hasattr(config, f)}
    config = config.replace(**sizes)
    if getattr(config, "pad_id", None) is None and config.family == "classifier":
        config = config.replace(pad_id=0)
    torch.manual_seed(0)
    model = build_model(config).eval()
    ids = torch.randint(4, VOCAB, (1, min(12, config.max_length)))
    trace = Trace()
    with torch.no_grad():
        if config.family == "seq2seq":
            model(ids, ids[:, :7], trace=trace)
        elif config.family == "classifier" and config.head == "flatten":  # post 000 reads exactly max_length words
            padded = torch.zeros(1, config.max_length, dtype=torch.long)
            padded[0, :12] = ids
            model(padded, trace=trace)
        else:
            model(ids, trace=trace)
    return config, model, trace


@pytest.mark.parametrize("preset", PRESETS)
def test_every_step_has_a_kind_and_axes_for_its_tensor(preset):
    config, _, trace = _traced(preset)
    assert trace.records, preset
    for name, record in trace.records.items():
        base = record.step.kind.partition(":")[0]
        assert base in KINDS, name
        t = trace[name]
        assert t.dim() - len(record.step.axes) in (0, 1), (name, record.step.axes, tuple(t.shape))  # a batch of one


@pytest.mark.parametrize("preset", PRESETS)
def test_each_equation_is_true_of_its_models_configuration(preset):
    config, _, trace = _traced(preset)
    d = config.dim // config.n_heads
    normed = "LN(x)" if config.norm_first else "x"
    seen: set[str] = set()
    for name, record in trace.records.items():
        step, ours = record.step, record.step.ours
        seen.add(step.kind)
        if step.kind == "projection" and step.part is not None:  # Q, K, V: what they read, their bias, the heads
            letter = "QKV"[step.part]
            source = "m" if name.endswith(("cross_attention.k", "cross_attention.v")) else normed
            assert ours.startswith(f"{letter} = {source} W_{letter}ᵀ"), (name, ours)
            assert (f"+ b_{letter}" in ours) == config.qkv_bias, (name, ours)
            assert f"H = {config.n_heads} heads of d_h = {d}" in ours, (name, ours)
        elif step.kind == "scale":
            assert f"√{d} = " in ours and step.factor == pytest.approx(1 / math.sqrt(d)), (name, ours)
            scores = trace[record.read_steps[0]]
            assert torch.allclose(trace[name], scores * step.factor)
        elif step.kind.startswith("activation:"):
            assert step.kind == f"activation:{config.activation}", name
            assert f"({normed} W₁ᵀ + b₁)" in ours, (name, ours)
        elif step.kind == "residual_sum":
            assert (normed == "LN(x)") == ("(LN(x))" in ours), (name, ours)
        elif step.kind == "norm:layer":
            assert f"ε = {getattr(config, 'norm_eps', 1e-5):g}" in ours, (name, ours)
        elif step.kind == "embedding" and record.own == "embedding":
            scaled = config.family == "seq2seq"  # the translator multiplies its rows by √C
            assert ("√C" in ours) == scaled and (not scaled or f"√C = {math.sqrt(config.dim):.4g}" in ours), ours
        elif step.kind == "mask" and config.family == "generator":
            assert "the future" in ours, ours
        elif name == "logits" and config.family in ("generator", "seq2seq"):
            tied = config.tie_embeddings
            assert (step.kind == "tied_output") == tied and ("Eᵀ" in ours or "E_targetᵀ" in ours) == tied, ours
            head = "LN(x)" if getattr(config, "final_norm", config.norm_first) else "x"
            assert ours.startswith(f"z = {head} "), ours
            assert ("+ b_out" in ours) == getattr(config, "head_bias", True), ours
    assert {"scores", "scale", "softmax", "weighted_sum", "merge_heads", "residual_sum"} <= seen, preset
    if config.family == "generator":
        assert "rotary" not in seen and "mask" in seen and "masked" in seen  # the causal mask, as added


def test_the_masked_scores_are_a_step_and_the_mask_is_what_is_added():
    _, _, trace = _traced("post-gpt")
    mask, masked = trace["blocks.0.attention.mask"][0], trace["blocks.0.attention.masked"][0]  # (H, T, T)
    future = torch.ones(mask.shape[-1], mask.shape[-1], dtype=torch.bool).triu(1)
    assert (mask[:, future] == -math.inf).all() and (mask[:, ~future] == 0).all()
    scaled = trace["blocks.0.attention.scaled"][0]
    assert torch.equal(masked[:, ~future], scaled[:, ~future])
    assert trace.records["blocks.0.attention.weights"].read_steps == ("blocks.0.attention.masked",)


def test_a_step_no_layer_declared_is_an_error_and_no_trace_costs_nothing():
    trace = Trace().at("attention", {"q": Step("projection", "HTD", "Q", "Q", "queries")})
    with pytest.raises(LookupError, match=r"'attention.k' was not declared .*\(declared here: q\)"):
        trace("k", torch.zeros(1))
    x = torch.zeros(2)
    assert NO_TRACE.at("anything")("undeclared", x) is x
    with pytest.raises(ValueError, match="step kind 'dense'"):
        Step("dense", "TC", "", "", "")
    with pytest.raises(ValueError, match="activation:NAME"):
        Step("activation", "TF", "", "", "")


def test_each_step_names_the_steps_and_parameters_it_read():
    _, model, trace = _traced("baby-gpt")
    names = {id(p): n for n, p in model.named_parameters()}
    # baby-gpt ties its table: the output layer reads the token table itself
    assert trace.inputs_of("logits", names) == (("final_norm",), ("embedding.weight", "head.bias"))
    steps, params = trace.inputs_of("blocks.1.attention.q", names)
    assert steps == ("blocks.1.attention_residual.norm",)  # pre-norm: the queries read the normed stream
    assert params == ("blocks.1.attention.qkv.weight",)  # baby-gpt: Q, K, V without a bias


def test_attention_called_on_its_own_records_one_heads_steps_and_no_mask_means_no_mask():
    from transformers_lite.layers.attention import scaled_dot_attention

    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 5, 4).unbind(0)  # (B, T, D) each
    trace = Trace()
    out, weights = scaled_dot_attention(q, k, v, trace=trace)
    assert torch.equal(trace["weights"], weights) and "mask" not in trace.records
    assert "softmax(S) over keys" in trace.records["weights"].step.ours  # no mask: nothing added to S
    assert trace.records["scaled"].step.factor == pytest.approx(1 / 2)  # √d_h of these 4 channels


def test_a_norm_of_a_sum_is_written_with_parentheses_and_the_posts_name_the_models_norm():
    from transformers_lite.layers.norms import NormSpec, norm_step
    from transformers_lite.layers.residual import Residual

    ours = norm_step(NormSpec("rms"), "x + f(x)", "after").ours
    assert "(x + f(x)) / √(mean((x + f(x))²)" in ours, ours
    rms = Residual(8, norm_first=True, spec=NormSpec("rms"))
    assert "RMSNorm(x)" in rms.steps["sum"].post, rms.steps["sum"].post
    assert Residual(8, spec=1e-6).spec == NormSpec(eps=1e-6)  # a number is the layer norm's ε


def test_an_edit_of_the_classifiers_logits_is_applied_once():
    config = get_preset("post-classifier").model.replace(vocab_size=VOCAB, pad_id=0)
    torch.manual_seed(0)
    model = build_model(config).eval()
    ids = torch.randint(4, VOCAB, (1, config.max_length))
    with torch.no_grad():
        plain = model(ids)
        edited = model(ids, trace=Trace({"logits": lambda z: z + 1.0}))
    assert torch.allclose(edited, plain + 1.0)  # not + 2: the head's step and the model's name are one tensor

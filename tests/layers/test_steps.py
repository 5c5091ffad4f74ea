"""Each layer declares the steps it computes: every step of every preset's model has a kind, and its
equation says what *that* model computes (its input, its bias, its activation, d_h, a tied table)."""

import math
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite import build_model, get_preset
from transformers_lite.config import GeneratorConfig, Seq2SeqConfig
from transformers_lite.layers import KINDS, Step, Trace
from transformers_lite.layers.activations import ACTIVATIONS
from transformers_lite.layers.steps import NOT_IN_POSTS
from transformers_lite.layers.trace import NO_TRACE
from transformers_lite.recipes.presets import PRESETS as ALL_PRESETS

VOCAB = 40
PRESETS = ["post-gpt", "baby-gpt", "llama-style", "post-classifier", "classifier", "seq2seq-small"]
QKV = {"query": "Q", "key": "K", "value": "V"}  # the roles of a Q, K or V step, by the letter it writes


def _traced(preset: str | object) -> tuple[object, torch.nn.Module, Trace]:
    """A preset's model, or a config's, (its vocabulary made small) and the trace of one forward over 12 tokens."""
    config = get_preset(preset).model if isinstance(preset, str) else preset
    sizes = {f: VOCAB for f in ("vocab_size", "src_vocab_size", "tgt_vocab_size") if hasattr(config, f)}
    config = config.replace(**sizes)
    if getattr(config, "pad_id", None) is None and config.family == "classifier":
        config = config.replace(pad_id=0)
    if getattr(config, "bigram_buckets", 0):
        config = config.replace(bigram_buckets=64)  # the hashed table's size says nothing of its steps
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
    norm = {"layer": "LN", "rms": "RMS"}[config.norm]
    normed = f"{norm}(x)" if config.norm_first else "x"
    seen: set[str] = set()
    for name, record in trace.records.items():
        step, ours = record.step, record.step.ours
        seen.add(step.kind)
        if step.kind == "projection" and step.role in QKV:  # Q, K, V: what they read, their bias, the heads
            letter = QKV[step.role]
            source = "m" if name.endswith(("cross_attention.k", "cross_attention.v")) else normed
            assert ours.startswith(f"{letter} = {source} W_{letter}ᵀ"), (name, ours)
            assert (f"+ b_{letter}" in ours) == config.qkv_bias, (name, ours)
            grouped = letter != "Q" and config.kv_heads is not None and source != "m"  # cross-attention: H heads
            heads = f"G = {config.kv_heads} key/value heads" if grouped else f"H = {config.n_heads} heads"
            assert f"{heads} of d_h = {d}" in ours, (name, ours)
        elif step.kind == "scale":
            assert f"√{d} = " in ours and step.factor == pytest.approx(1 / math.sqrt(d)), (name, ours)
            scores = trace[record.read_steps[0]]
            assert torch.allclose(trace[name], scores * step.factor)
        elif step.kind.startswith("activation:"):
            gate = config.ffn == "swiglu"  # SwiGLU gates with SiLU; the MLP applies the config's activation
            assert step.kind == f"activation:{'silu' if gate else config.activation}", name
            weight, bias = ("W_g", "b_g") if gate else ("W₁", "b₁")
            assert f"({normed} {weight}ᵀ{f' + {bias}' if config.bias else ''})" in ours, (name, ours)
        elif step.kind == "residual_sum":
            assert config.norm_first == (f"({norm}(x))" in ours), (name, ours)
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
            head = f"{norm}(x)" if getattr(config, "final_norm", config.norm_first) else "x"
            assert ours.startswith(f"z = {head} "), ours
            assert ("+ b_out" in ours) == getattr(config, "head_bias", True), ours
    assert {"scores", "scale", "softmax", "weighted_sum", "merge_heads", "residual_sum"} <= seen, preset
    if config.family == "generator":
        assert (
            ("rotary" in seen) == (config.position == "rope") and "mask" in seen and "masked" in seen
        )  # the causal mask


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
    assert rms.steps["sum"].post is None and rms.steps["norm"].post is None  # no post has pre-norm or RMSNorm
    post_norm = Residual(8, norm_first=False, branch="MHA").steps["norm"].post
    assert post_norm is not None and post_norm.startswith("LayerNorm(x + MHA(x)) = "), post_norm
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


# --- the sentence a step says of itself, and the posts' column -------------------------------------------

_GPT_OPTIONS = st.fixed_dictionaries(
    {
        "norm_first": st.booleans(),
        "final_norm": st.booleans(),
        "qkv_bias": st.booleans(),
        "head_bias": st.booleans(),
        "tie_embeddings": st.booleans(),
        "activation": st.sampled_from(sorted(ACTIVATIONS)),
        "ffn": st.sampled_from(["mlp", "swiglu"]),
        "kv_heads": st.sampled_from([None, 1]),
        "bias": st.booleans(),
        "norm": st.sampled_from(["layer", "rms"]),
        "position": st.sampled_from(["learned", "rope"]),
        "qk_norm": st.booleans(),
        "logit_cap": st.sampled_from([0.0, 30.0]),
        "value_residual": st.booleans(),
        "bigram_embedding": st.booleans(),
        "embedding_shortcut": st.booleans(),
    }
)
_SMALL = {"dim": 16, "n_heads": 2, "dim_hidden": 32, "max_length": 16}
_TRANSLATORS = [
    Seq2SeqConfig(**_SMALL, n_encoder_blocks=1, n_decoder_blocks=1, norm_first=False, tie_embeddings=False),
    Seq2SeqConfig(**_SMALL, n_encoder_blocks=1, n_decoder_blocks=1, position="none", norm="rms"),
]
_DENSE = re.compile(r"(\S+) times (\S+ᵀ)")  # "LN(x) times W_Qᵀ": what a Dense reads, and its weight


def _check_sentences(config, trace: Trace) -> None:
    """Each step's sentence (``computes``, what the walk shows) says what its equation computes, for this model."""
    for name, record in trace.records.items():
        step = record.step
        shown = step.to_dict()
        base, _, which = step.kind.partition(":")
        says, ours = shown["computes"], step.ours
        assert says == (step.computes or KINDS[base]), name
        assert "layers.norms" not in says and "activation:" not in says, (name, says)  # no code names in a sentence
        assert ("[Q; K; V]" in says) == (step.role in QKV), (name, says)  # the Q/K/V remark on Q, K, V only
        if base in ("projection", "tied_output", "activation"):  # a Dense: what it reads, its weight, its bias
            read, weight = _DENSE.search(says).groups()
            assert f"{read} {weight}" in ours, (name, says, ours)
            assert ("plus the bias" in says) == (" + b" in ours) and ("no bias" in says) == (" + b" not in ours), (
                name,
                says,
                ours,
            )
            assert ("token table" in says) == (base == "tied_output"), (name, says)
        if base == "activation":  # the model's activation, by the name its equation writes
            gate = config.ffn == "swiglu"
            written = ACTIVATIONS[which].written
            assert which == ("silu" if gate else config.activation), (name, which)
            assert says.endswith(f"the nonlinearity {written} on each entry"), (name, says)
            assert ours.startswith(f"{'g' if gate else 'h'} = {written}("), (name, ours)
        if base == "norm":  # the norm this model has: LayerNorm subtracts a mean and adds β, RMSNorm does not
            assert which == config.norm, (name, which, config.norm)
            assert ("layer norm" in says) == (which == "layer") == ("LN(" in ours and "μ" in ours), (name, says)
            assert ("RMS norm" in says) == (which == "rms") == ("RMS(" in ours), (name, says, ours)
        if base == "scale":
            assert f"= {step.factor:.3g}" in says and f"√{round(1 / step.factor**2)}" in ours, (name, says, ours)
        if base == "embedding" and step.factor is not None:
            assert f"√C = {step.factor:.4g}" in says and f"√C = {step.factor:.4g}" in ours, (name, says)
        if base == "soft_cap":
            assert f"c = {step.factor:g}" in says and f"c = {step.factor:g}" in ours, (name, says)


def _check_posts(config, trace: Trace) -> None:
    """A step's posts' column quotes the posts, or says uniformly that no post has it."""
    norm_first = getattr(config, "norm_first", False)
    for name, record in trace.records.items():
        step, own = record.step, record.own
        shown = step.to_dict()
        base, _, which = step.kind.partition(":")
        assert shown["in_posts"] == (step.post is not None), name
        assert shown["post_equation"] == (step.post if step.post is not None else NOT_IN_POSTS), name
        if step.post is None:
            continue
        post = step.post
        assert not post.startswith("—") and "not in the posts" not in post, (name, post)  # one rule: post None
        assert "√(σ²" not in post and not re.search(r"E(_target)?ᵀ|\bE\b(?!\[)", post), (name, post)  # no tied table

        assert base not in ("tied_output", "rotary", "soft_cap", "mix", "lm_head", "mixture", "mean_pool"), name
        assert base != "activation" or which == "relu", (name, step.kind)  # the posts' feed-forward is ReLU's
        if base == "norm":  # the posts' LayerNorm divides by σ + ε; no post has RMSNorm or a pre-norm input
            assert which == "layer" and "/ (σ + ε)" in post, (name, post)
            assert not norm_first and "final_norm" not in name and "q_norm" not in name, name
        if base == "residual_sum":
            assert not norm_first, (name, post)  # the posts' blocks are post-norm
        if base == "embedding":
            assert step.factor is None and own == "embedding", (name, post)  # no √C, no table of pairs
        if base == "sum":
            assert "√C" not in step.ours and "B[" not in step.ours and "PE" in step.ours, (name, step.ours)
        if base == "position":
            assert "PE[t] = 0" not in step.ours, name
        if base == "merge_heads" or (own == "out" and record.place.scope.endswith("attention")):
            assert "vcat(A₁, …, A_H)" in post and "[A₁ … A_H]" not in post, (name, post)  # the posts stack heads
        if base in ("mask", "masked"):  # the posts mask only the future; no post masks padding
            mask = trace.records[f"{record.place.scope}.mask"].step
            assert "future" in mask.ours, (name, mask.ours)


@pytest.mark.parametrize("preset", sorted(ALL_PRESETS))
def test_every_presets_steps_say_what_their_equations_say_and_quote_only_the_posts(preset):
    config, _, trace = _traced(preset)
    _check_sentences(config, trace)
    _check_posts(config, trace)


@pytest.mark.parametrize("config", _TRANSLATORS, ids=["post-norm-untied", "no-positions-rms"])
def test_a_translators_steps_say_what_their_equations_say_and_quote_only_the_posts(config):
    config, _, trace = _traced(config)
    _check_sentences(config, trace)
    _check_posts(config, trace)


@settings(max_examples=30, deadline=None)
@given(options=_GPT_OPTIONS)
def test_any_gpts_steps_say_what_their_equations_say_and_quote_only_the_posts(options):
    config = GeneratorConfig(**_SMALL, n_blocks=2, vocab_size=VOCAB, dropout=0.0, **options)
    config, _, trace = _traced(config)
    _check_sentences(config, trace)
    _check_posts(config, trace)


def test_the_posts_quoted_where_this_project_once_misquoted_them():
    """Seed 000's layer norm divides by σ + ε; its heads are stacked (vcat) before W_O; post 004's mask
    replaces the masked scores by −∞; a tied output layer, GELU and √C-scaled rows are in no post."""
    config, _, trace = _traced("post-gpt")
    post = {name: r.step.post for name, r in trace.records.items()}
    assert (
        post["blocks.0.attention_residual.norm"]
        == "LayerNorm(x + MHA(x)) = a ⊙ (X − μ) / (σ + ε) + b, for each column X"
    )
    assert post["blocks.0.attention.merged"] == "vcat(A₁, …, A_H)"
    assert post["blocks.0.attention.out"] == "W_O vcat(A₁, …, A_H) .+ b_O"
    assert post["blocks.0.attention.masked"] == "ifelse.(mask, S, −∞)"
    assert post["blocks.0.attention.q"] == "Q = W_Q X"  # post 004: Dense(32 => 32; bias=false)
    assert post["blocks.0.feed_forward.hidden"] == "h = relu.(W₁ x .+ b₁)"
    _, _, baby = _traced("baby-gpt")  # pre-norm, GELU, a final norm, the table tied to the output layer
    for name in ("blocks.0.attention_residual.norm", "blocks.0.attention_residual.sum", "blocks.0.feed_forward.hidden"):
        assert baby.records[name].step.to_dict()["post_equation"] == NOT_IN_POSTS, name
    assert baby.records["final_norm"].step.post is None and baby.records["logits"].step.post is None
    assert baby.records["blocks.0.attention.q"].step.post == "Q = W_Q X"  # the posts' Q reads their X
    _, _, translator = _traced("seq2seq-small")  # √C-scaled rows
    assert translator.records["encoder.embedding"].step.post is None
    assert translator.records["encoder.input"].step.post is None


def test_the_sentence_names_this_models_bias_activation_and_norm():
    """What the issue found on the page: "x Wᵀ + b" on a bias-free GPT's Q, the Q/K/V remark on the output
    Dense, "activation: gelu" on a ReLU model, a pointer to a module on every norm."""
    _, _, trace = _traced("post-gpt")
    says = {name: r.step.to_dict()["computes"] for name, r in trace.records.items()}
    assert says["blocks.0.attention.q"].startswith("one third of the one [Q; K; V] Dense (Q): x times W_Qᵀ, no bias")
    assert says["blocks.0.attention.out"] == "a Dense: [A₁ … A_H] times W_Oᵀ, plus the bias b_O"
    assert says["blocks.0.feed_forward.out"] == "a Dense: h times W₂ᵀ, plus the bias b₂"
    assert says["blocks.0.feed_forward.hidden"].endswith("then the nonlinearity ReLU on each entry")
    assert says["blocks.0.attention_residual.norm"].startswith("a layer norm: each row minus its mean μ")
    rms = GeneratorConfig(**_SMALL, n_blocks=1, vocab_size=VOCAB, norm="rms", norm_first=True, final_norm=True)
    _, _, trace = _traced(rms)
    assert trace.records["final_norm"].step.to_dict()["computes"].startswith("an RMS norm: each row divided by")

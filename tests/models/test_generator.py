import json

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite import GeneratorConfig, build_model, count_parameters, get_preset
from transformers_lite.layers import Trace


def test_post_gpt_parameter_count_is_exact():
    assert count_parameters(build_model(get_preset("post-gpt-original").model)) == (44_487, 0)


def test_shapes_and_last_only():
    model = build_model(get_preset("post-gpt-original").model).eval()
    ids = torch.randint(0, 71, (3, 20))
    assert model(ids).shape == (3, 20, 71)
    assert model(ids[0]).shape == (1, 20, 71)
    last = model(ids, last_only=True)
    assert last.shape == (3, 1, 71)
    assert torch.allclose(last[:, 0], model(ids)[:, -1], atol=1e-6)


@pytest.mark.parametrize("position", ["learned", "rope"])
def test_causal_no_leak(position):
    model = build_model(GeneratorConfig(vocab_size=20, max_length=16, position=position, dropout=0.0)).eval()
    ids = torch.randint(0, 20, (2, 16))
    changed = ids.clone()
    changed[:, 9:] = torch.randint(0, 20, (2, 7))
    a, b = model(ids), model(changed)
    assert torch.allclose(a[:, :9], b[:, :9], atol=1e-6)
    assert not torch.allclose(a[:, 9:], b[:, 9:])


@pytest.mark.parametrize("norm_first", [False, True])
def test_kv_cache_logits_equal_full_forward(norm_first):
    model = build_model(
        GeneratorConfig(vocab_size=20, max_length=16, norm_first=norm_first, final_norm=norm_first, dropout=0.0)
    ).eval()
    ids = torch.randint(0, 20, (2, 12))
    full = model(ids)
    cache = model.new_cache(2)
    pieces = [model(ids[:, :5], cache=cache)]
    for i in range(5, 12):
        pieces.append(model(ids[:, i : i + 1], cache=cache))
    assert torch.allclose(torch.cat(pieces, 1), full, atol=1e-5)


def test_context_limit_error_and_weight_tying():
    model = build_model(GeneratorConfig(vocab_size=20, max_length=8, tie_embeddings=True))
    with pytest.raises(ValueError, match="exceeds the context length 8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    assert model.head.weight is model.embedding.weight
    untied = build_model(GeneratorConfig(vocab_size=20, max_length=8))
    assert count_parameters(untied)[0] - count_parameters(model)[0] == 20 * 32


def test_seeded_construction_and_training_step_are_deterministic():
    def run():
        torch.manual_seed(123)
        model = build_model(get_preset("post-gpt-original").model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        ids = torch.randint(0, 71, (4, 64))
        loss = torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
        loss.backward()
        opt.step()
        return loss.item(), model.head.weight.detach().clone()

    (l1, w1), (l2, w2) = run(), run()
    assert l1 == l2 and torch.equal(w1, w2)


def test_without_the_causal_mask_positions_see_the_future_and_generation_still_runs():
    from transformers_lite.generation.generate import generate_tokens

    cfg = GeneratorConfig(vocab_size=12, max_length=8, dim=16, n_heads=2, dim_hidden=32, n_blocks=1, dropout=0.0)
    torch.manual_seed(0)
    causal = build_model(cfg).eval()
    open_ = build_model(cfg.replace(causal=False)).eval()
    open_.load_state_dict(causal.state_dict())
    a, b = torch.tensor([[1, 2, 3, 4]]), torch.tensor([[1, 2, 3, 9]])
    assert torch.equal(causal(a)[0, 0], causal(b)[0, 0])  # position 0 cannot see position 3
    assert not torch.allclose(open_(a)[0, 0], open_(b)[0, 0])  # without the mask it can: the teaching experiment
    out = list(generate_tokens(open_, torch.tensor([1, 2]), 10, seed=0))
    assert len(out) == 10 and all(0 <= i < 12 for i in out)


# the speedrun's options: zero_init, activation=relu2, logit_cap, value_residual, bigram_embedding,
# embedding_shortcut

SMALL = GeneratorConfig(vocab_size=11, max_length=12, dim=16, n_heads=2, dim_hidden=32, n_blocks=3, dropout=0.0)
OPTIONS = {
    "zero_init": True,
    "activation": "relu2",
    "logit_cap": 3.0,
    "value_residual": True,
    "bigram_embedding": True,
    "embedding_shortcut": True,
}


@settings(max_examples=15, deadline=None)
@given(
    norm_first=st.booleans(),
    norm=st.sampled_from(["layer", "rms"]),
    init=st.sampled_from(["torch", "gpt2"]),
    seed=st.integers(0, 2**16),
    scale=st.floats(0.1, 10.0),
)
def test_zero_init_makes_every_block_the_identity_on_its_stream_at_step_0(norm_first, norm, init, seed, scale):
    """Each branch's closing Dense starts at zero, so each sub-layer adds nothing. Pre-norm (``x + f(N(x))``):
    every block returns its input exactly. Post-norm (``N(x + f(x))``): a sub-layer returns ``N(x)``, so a block
    returns ``N(N(x))``, exactly: the norm of its input (``N(N(x)) = N(x)`` up to ε), not the input itself.
    The untied head is zero too: every next token is equally likely, the loss is ln V."""
    torch.manual_seed(seed)
    config = SMALL.replace(norm_first=norm_first, norm=norm, init=init, zero_init=True, final_norm=norm_first)
    model = build_model(config).eval()
    x = torch.randn(2, 7, 16) * scale
    for block in model.blocks:
        norm_fn = block.attention_residual.norm  # γ = 1 (β = 0): both sub-layers' norms are the same function
        expected = x if norm_first else norm_fn(norm_fn(x))
        assert torch.equal(block(x), expected)
        if not norm_first:
            # N(x) has variance σ² / (σ² + ε), so the second norm rescales it by about 1 + ε / 2σ²
            assert torch.allclose(block(x), norm_fn(x), rtol=2e-3, atol=1e-5)
    ids = torch.randint(0, 11, (2, 12))
    logits = model(ids)
    assert torch.equal(logits, torch.zeros_like(logits))
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten())
    assert torch.isclose(loss, torch.log(torch.tensor(11.0)))


def test_zero_init_weights_get_a_gradient_and_leave_the_rest_and_a_tied_head_alone():
    torch.manual_seed(0)
    plain = build_model(SMALL.replace(norm_first=True))
    torch.manual_seed(0)
    model = build_model(SMALL.replace(norm_first=True, zero_init=True))
    before = dict(plain.named_parameters())
    zeroed = {n for n, p in model.named_parameters() if not p.any() and before[n].any()}  # (norm β start at 0)
    closing = {f"blocks.{i}.{m}.{w}" for i in range(3) for m in ("attention.out", "feed_forward.dense2") for w in "wb"}
    assert zeroed == {n.replace(".w", ".weight").replace(".b", ".bias") for n in closing} | {"head.weight", "head.bias"}
    for name, p in model.named_parameters():  # the same draws otherwise: zero_init only zeroes
        assert name in zeroed or torch.equal(p, before[name]), name
    ids = torch.randint(0, 11, (2, 12))
    torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten()).backward()
    assert model.head.weight.grad.abs().sum() > 0  # the head moves first: a Dense's ∂W does not read W
    assert not model.blocks[2].feed_forward.dense2.weight.grad.any()  # the zero head passes ∂x = ∂z W = 0 back
    tied = build_model(SMALL.replace(zero_init=True, tie_embeddings=True))
    assert tied.head.weight is tied.embedding.weight and tied.embedding.weight.abs().sum() > 0


@settings(max_examples=20, deadline=None)
@given(cap=st.floats(0.5, 50.0), seed=st.integers(0, 2**16))
def test_logit_cap_squashes_every_logit_into_the_cap(cap, seed):
    torch.manual_seed(seed)
    model = build_model(SMALL.replace(logit_cap=cap)).eval()
    with torch.no_grad():
        model.head.weight.mul_(100)  # logits far beyond the cap
    trace = Trace()
    logits = model(torch.randint(0, 11, (2, 12)), trace=trace)
    assert logits.abs().max() <= cap
    assert torch.allclose(logits, cap * torch.tanh(trace["uncapped"] / cap))
    assert trace.records["logits"].step.kind == "soft_cap" and trace.records["logits"].read_steps == ("uncapped",)


def test_relu2_is_relu_squared():
    from transformers_lite.layers.activations import activation

    a = torch.linspace(-3, 3, 61)
    assert torch.equal(activation("relu2").function(a), torch.relu(a) ** 2)


def test_value_residual_mixes_the_first_blocks_values_into_every_later_block():
    torch.manual_seed(0)
    model = build_model(SMALL.replace(value_residual=True)).eval()
    assert model.blocks[0].attention.value_mix is None  # the first block's values are V₁ themselves
    assert all(torch.equal(b.attention.value_mix, torch.tensor([0.5, 0.5])) for b in model.blocks[1:])
    ids = torch.randint(0, 11, (2, 12))
    trace = Trace()
    model(ids, trace=trace)
    for i in (1, 2):
        assert torch.allclose(
            trace[f"blocks.{i}.attention.v_mixed"],
            0.5 * trace[f"blocks.{i}.attention.v"] + 0.5 * trace["blocks.0.attention.v"],
        )
        assert trace.records[f"blocks.{i}.attention.heads"].read_steps[1] == f"blocks.{i}.attention.v_mixed"
        assert trace.records[f"blocks.{i}.attention.v_mixed"].read_steps[1] == "blocks.0.attention.v"
    plain = build_model(SMALL).eval()  # λ = (1, 0): the model without value residual, weight for weight
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if "value_mix" not in k})
    with torch.no_grad():
        for b in model.blocks[1:]:
            b.attention.value_mix.copy_(torch.tensor([1.0, 0.0]))
    assert torch.allclose(model(ids), plain(ids), atol=1e-6)


def test_the_bigram_table_starts_at_zero_and_reads_the_token_before():
    torch.manual_seed(0)
    plain = build_model(SMALL).eval()
    torch.manual_seed(0)
    model = build_model(SMALL.replace(bigram_embedding=True)).eval()
    assert model.pairs.weight.shape == (12 * 11, 16)  # (V + 1) V rows: every pair, and the start
    ids = torch.randint(0, 11, (2, 12))
    assert torch.equal(model(ids), plain(ids))  # an untrained table adds nothing, and draws nothing
    with torch.no_grad():
        model.pairs.weight.normal_()
    trace = Trace()
    model(ids, trace=trace)
    previous = torch.cat([torch.full((2, 1), 11), ids[:, :-1]], 1)
    assert torch.equal(trace["pairs"], model.pairs.weight[previous * 11 + ids])


@pytest.mark.parametrize("options", [{k: v} for k, v in OPTIONS.items()] + [OPTIONS])
def test_each_option_keeps_cache_and_generation_paths_equal_and_round_trips(options):
    from transformers_lite.config import apply_overrides, config_from_dict
    from transformers_lite.generation.generate import generate

    config = SMALL.replace(norm_first=True, final_norm=True, **options)
    assert (
        apply_overrides(SMALL.replace(norm_first=True, final_norm=True), [f"{k}={v}" for k, v in options.items()])
        == config
    )
    assert config_from_dict(json.loads(config.to_json())) == config
    torch.manual_seed(0)
    model = build_model(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)  # away from the zero start, so every path computes something
    ids = torch.randint(0, 11, (2, 12))
    cache = model.new_cache(2)
    pieces = [model(ids[:, :5], cache=cache)] + [model(ids[:, i : i + 1], cache=cache) for i in range(5, 12)]
    assert torch.allclose(torch.cat(pieces, 1), model(ids), atol=1e-5)
    prompt = torch.tensor([1, 2, 3])  # 30 tokens through a 12-token window: the cache is refilled as it slides
    runs = [list(generate(model, prompt, 30, num_samples=2, seed=1, path=p)) for p in ("cache", "no-cache")]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("norm_first", [False, True])
def test_every_option_has_its_hand_rule_at_every_step(norm_first):
    from types import SimpleNamespace

    from transformers_lite.families import FAMILIES
    from transformers_lite.inspect.backward import trace_backward
    from transformers_lite.tokenizers.char import CharTokenizer

    text = "To be, or not to be"
    tokenizer = CharTokenizer(sorted(set(text)))
    config = SMALL.replace(vocab_size=len(tokenizer), norm_first=norm_first, **OPTIONS)
    torch.manual_seed(0)
    model = build_model(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)  # zero_init would leave most gradients at zero
    run = SimpleNamespace(model=model, config=config, tokenizer=tokenizer, family=FAMILIES["generator"])
    result = trace_backward(run, text)
    kinds = {k for c in result.checks.values() for k in c["kinds"]}
    assert {"soft_cap", "mix", "activation:relu2", "embedding"} <= kinds
    assert {"param:pairs.weight", "param:blocks.1.attention.value_mix", "param:blocks.2.shortcut"} <= set(result.checks)
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(result.checks)
    worst = {n: c["hand_max_diff"] for n, c in result.checks.items() if c["hand_max_diff"] > 1e-5}
    assert not worst, worst


def test_the_options_are_off_by_default_and_gpt2_names_each_it_lacks():
    from transformers_lite.interop.gpt2 import gpt2_differences

    assert all(getattr(GeneratorConfig(), k) in (False, 0.0, "relu") for k in OPTIONS)
    shaped = GeneratorConfig(norm_first=True, final_norm=True, head_bias=False, activation="gelu_tanh")
    assert gpt2_differences(shaped.replace(zero_init=True, activation="relu2")) == []  # an init; HF's relu2
    lacks = {"logit_cap": 30.0, "value_residual": True, "bigram_embedding": True, "embedding_shortcut": True}
    assert len(gpt2_differences(shaped.replace(**lacks))) == 4
    with pytest.raises(Exception, match="logit_cap"):
        GeneratorConfig(logit_cap=-1.0)


def test_the_embedding_shortcut_mixes_the_first_blocks_input_into_every_later_block():
    torch.manual_seed(0)
    plain = build_model(SMALL).eval()
    torch.manual_seed(0)
    model = build_model(SMALL.replace(embedding_shortcut=True)).eval()
    assert model.blocks[0].shortcut is None  # the first block's input is x₀ itself
    ids = torch.randint(0, 11, (2, 12))
    assert torch.equal(model(ids), plain(ids))  # λ = (1, 0) at the start: the model as it was
    with torch.no_grad():
        for b in model.blocks[1:]:
            b.shortcut.copy_(torch.tensor([0.25, 2.0]))
    trace = Trace()
    model(ids, trace=trace)
    for i in (1, 2):
        x = trace[f"blocks.{i - 1}.feed_forward_residual.norm"]  # what block i - 1 handed on (post-norm)
        assert torch.allclose(trace[f"blocks.{i}.shortcut"], 0.25 * x + 2.0 * trace["input"])
        assert trace.records[f"blocks.{i}.shortcut"].read_steps[:2] == (
            f"blocks.{i - 1}.feed_forward_residual.norm",
            "input",
        )

"""A layer variant is a class (or a record) chosen by name, and everything downstream takes it as it is:
SwiGLU and grouped-query attention compute what their equations say (fused ≡ explicit, cache ≡ no cache,
a hand rule at every step within 1e-6 of autograd in float64), and a toy activation and a toy feed-forward
class added here, in this module alone, train, trace, get their hand rules, pass every exercise and are
named by GPT-2 export, while a name nobody registered is refused by name where it is looked up."""

import math
from types import SimpleNamespace
from typing import NamedTuple

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor, nn

import transformers_lite as tl
from transformers_lite import GeneratorConfig, build_model
from transformers_lite.backprop.rules import rule_of
from transformers_lite.cli.main import main
from transformers_lite.errors import ConfigError, RunError
from transformers_lite.exercises import EXERCISES, Source
from transformers_lite.exercises.checker import check
from transformers_lite.families import FAMILIES
from transformers_lite.generation.generate import generate
from transformers_lite.inspect.backward import trace_backward
from transformers_lite.interop.gpt2 import export_gpt2, gpt2_differences
from transformers_lite.layers import (
    ACTIVATIONS,
    FEED_FORWARDS,
    Activation,
    BlockSpec,
    FeedForwardLayer,
    GroupedQueryAttention,
    KVCache,
    Step,
    SwiGLU,
    Trace,
    activation,
)
from transformers_lite.layers.steps import dense
from transformers_lite.tokenizers.char import CharTokenizer

from ..helpers import sets
from ..reliability.conftest import files  # noqa: F401 - fixture

TEXT = "To be, or not to be, that is the question."
TOKENIZER = CharTokenizer(sorted(set(TEXT)))
TINY = [*sets("dim=16", "n_heads=4", "dim_hidden=24", "n_blocks=1", "max_length=16"), "--batch-size", "4"]


# ------------------------------------------------------------------ a toy activation and a toy feed-forward
SOFTSIGN = Activation("softsign", lambda a: a / (1 + a.abs()), lambda a: 1 / (1 + a.abs()) ** 2, "Softsign", None, None)


class ToyWeights(NamedTuple):
    up: Tensor  # (F, C)
    down: Tensor  # (C, F)


def toy_equations(x: Tensor, w: ToyWeights, act, trace=tl.layers.NO_TRACE) -> Tensor:  # noqa: ANN001
    """``(act(x W_uᵀ) / 2) W_dᵀ``: a feed-forward that halves its hidden units, with kinds the rules know."""
    h = act(F.linear(x, w.up))  # (B, T, F)
    if not trace.active:
        return F.linear(h * 0.5, w.down)
    h = trace("hidden", h, x, w.up, None)
    half = trace("halved", h * 0.5, h)
    return trace("out", F.linear(half, w.down), half, w.down, None)


class ToyFeedForward(FeedForwardLayer):
    about = "a toy feed-forward that halves its hidden units"
    equations = staticmethod(toy_equations)

    def __init__(self, spec: BlockSpec, reads: str = "x") -> None:
        super().__init__(spec, reads)
        self.up = nn.Linear(spec.dim, spec.dim_hidden, bias=False)
        self.down = nn.Linear(spec.dim_hidden, spec.dim, bias=False)
        up, _, words = dense(reads, "W_u", None)
        name = self.activation.written
        self.steps = {
            "hidden": Step(
                f"activation:{self.activation.name}",
                "TF",
                f"h = {name}({up})",
                None,
                "hidden units",
                computes=f"{words}, then the nonlinearity {name} on each entry",
                role="up",
            ),
            "halved": Step("scale", "TF", "h / 2", None, "the hidden units halved", factor=0.5),
            "out": Step("projection", "TC", dense("h", "W_d", None)[0], None, "what it adds", role="down"),
        }

    def weights(self) -> ToyWeights:
        return ToyWeights(self.up.weight, self.down.weight)

    def summary_rows(self, count):  # noqa: ANN001, ANN201
        return [
            (0, ".up", "Dense(up)", count(self.up.parameters()), 0),
            (0, ".down", "Dense(down)", count(self.down.parameters()), 0),
        ]

    def closing(self) -> nn.Linear:
        return self.down


@pytest.fixture
def toy(monkeypatch):
    """The toy activation and feed-forward, registered for one test: one entry in each table, nothing else."""
    monkeypatch.setitem(ACTIVATIONS, "softsign", SOFTSIGN)
    monkeypatch.setitem(FEED_FORWARDS, "toy", ToyFeedForward)


def _every_step_has_its_hand_rule(run) -> None:  # noqa: ANN001
    """Every step and parameter of ``run``'s model (in float64) has its hand-derived gradient within 1e-6."""
    result = trace_backward(run, TEXT[:14])
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(result.checks), result.missing
    worst = {n: c["hand_max_diff"] for n, c in result.checks.items() if c["hand_max_diff"] > 1e-6}
    assert not worst, worst


def _as_double(config) -> SimpleNamespace:  # noqa: ANN001
    torch.manual_seed(0)
    model = build_model(config.replace(vocab_size=len(TOKENIZER))).double().eval()
    return SimpleNamespace(model=model, config=model.config, tokenizer=TOKENIZER, family=FAMILIES["generator"])


def _trained(inputs, out, *options: str):  # noqa: ANN001, ANN202 - the files fixture's folder, the run's folder
    """A tiny generator trained on the test text for 3 steps with ``options`` (in this process), loaded."""
    assert (
        main(
            [
                "train",
                "generator",
                "--text",
                str(inputs / "text.txt"),
                *TINY,
                *options,
                "--max-steps",
                "3",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return tl.load(out)


def _every_exercise_passes(source: Source) -> None:
    for e in EXERCISES:
        verdict = check(e, e.solution, e.inputs(source))
        assert verdict.passed, (e.name, source.what, verdict.message)


def test_a_toy_activation_and_feed_forward_take_part_everywhere_with_no_other_change(toy, files, tmp_path):  # noqa: F811
    out = tmp_path / "toy"
    toy_sets = sets("ffn=toy", "activation=softsign", "norm_first=true", "final_norm=true")
    run = _trained(files, out, *toy_sets)
    traced = run.trace("To be")
    kinds = {n.rsplit(".", 1)[-1]: traced.traced[n].step.kind for n in traced.names() if ".feed_forward." in n}
    assert kinds == {"hidden": "activation:softsign", "halved": "scale", "out": "projection"}
    assert [traced.traced[n].step.role for n in traced.find(role="down")] == ["down"]
    _every_step_has_its_hand_rule(_as_double(run.config))
    _every_exercise_passes(Source(run))
    with pytest.raises(RunError) as refused:
        export_gpt2(out, tmp_path / "hf")
    said = str(refused.value)
    assert "a toy feed-forward that halves its hidden units" in said and "the activation Softsign" in said
    assert "ffn=mlp" in said  # and how to train one GPT-2 takes


def test_an_activation_nobody_registered_is_refused_by_name_where_it_is_looked_up():
    with pytest.raises(ConfigError, match="'softsign'"):
        GeneratorConfig(activation="softsign")
    with pytest.raises(ValueError, match="unknown activation 'softsign'; choose one of relu, gelu"):
        activation("softsign")
    step = Step("activation:softsign", "TF", "h", None, "h")  # a step of a kind whose record is missing
    x, w = torch.randn(3, 4), torch.randn(5, 4)
    with pytest.raises(ValueError, match="unknown activation 'softsign'"):  # no fall-through to another derivative
        rule_of(step.kind)(step, torch.zeros(3, 5), torch.ones(3, 5), [x, w, None])
    with pytest.raises(ConfigError, match="ffn must be one of mlp, swiglu, got 'toy'"):
        GeneratorConfig(ffn="toy")


# ------------------------------------------------------------------ SwiGLU and grouped-query attention
def test_swiglu_computes_a_silu_gate_times_an_up_projection():
    layer = SwiGLU(BlockSpec(8, 2, 12, bias=False))
    x = torch.randn(2, 5, 8)
    expected = (F.silu(x @ layer.gate.weight.T) * (x @ layer.up.weight.T)) @ layer.down.weight.T
    assert torch.allclose(layer(x), expected, atol=1e-6)
    trace = Trace()
    assert torch.allclose(layer(x, trace=trace), expected, atol=1e-6)
    assert [r.step.role for r in trace.records.values()] == ["gate", "up", "", "down"]
    assert trace.records["hidden"].read_steps == ("gate", "up") and trace.records["hidden"].step.kind == "product"
    assert [row[1] for row in layer.summary_rows(lambda params: 0)] == [".gate", ".up", ".down"]


@settings(max_examples=12, deadline=None)
@given(heads=st.sampled_from([2, 4, 8]), share=st.sampled_from([1, 2, 4, 8]), rope=st.booleans(), t=st.integers(2, 9))
def test_grouped_query_attention_is_multi_head_attention_with_each_key_head_repeated(heads, share, rope, t):
    kv = max(1, heads // share)
    torch.manual_seed(0)
    rotary = tl.layers.RotaryEmbedding(16 // heads, 16) if rope else None
    layer = GroupedQueryAttention(heads, 16, kv_heads=kv, rope=rotary).eval()
    x = torch.randn(2, t, 16)
    fused, trace = layer(x, causal=True), Trace()
    explicit = layer(x, causal=True, trace=trace)
    assert torch.allclose(fused, explicit, atol=1e-5)  # the fused kernel (enable_gqa) ≡ the explicit path
    d = 16 // heads
    q, k, v = F.linear(x, layer.qkv.weight, layer.qkv.bias).split([16, kv * d, kv * d], -1)
    k, v = (z.view(2, t, kv, d).transpose(1, 2) for z in (k, v))  # (B, G, T, D)
    if rope:
        k = rotary(k, 0)
    assert torch.equal(trace["k_repeated"], k.repeat_interleave(heads // kv, 1))  # head h reads head h // (H/G)
    assert trace.records["k_repeated"].step.axes == "HTD" and trace.records["k"].step.axes == "GTD"
    cache = KVCache(1, 2, kv, t, d)  # the cache holds G heads
    steps = [layer(x[:, :1], causal=True, cache=cache)]
    cache.advance(1)
    for i in range(1, t):
        steps.append(layer(x[:, i : i + 1], causal=True, cache=cache))
        cache.advance(1)
    assert torch.allclose(torch.cat(steps, 1), fused, atol=1e-5)  # cache ≡ no cache


def test_kv_heads_must_divide_the_heads_and_one_is_multi_query():
    with pytest.raises(ConfigError, match="kv_heads=3 must divide n_heads=4"):
        GeneratorConfig(n_heads=4, kv_heads=3)
    assert GeneratorConfig(n_heads=4, kv_heads=4).kv_heads is None  # one per head is multi-head attention
    model = build_model(GeneratorConfig(vocab_size=20, dim=16, n_heads=4, kv_heads=1))
    assert model.blocks[0].attention.qkv.weight.shape == (16 + 2 * 4, 16)  # one key and one value head of D = 4
    assert model.new_cache(3).buffer.shape == (3, 2, 3, 1, 64, 4)  # (L, 2, B, G, N, D)


@pytest.mark.parametrize(
    "options",
    [{"ffn": "swiglu"}, {"kv_heads": 2}, {"kv_heads": 1, "qk_norm": True, "value_residual": True, "position": "rope"}],
    ids=["swiglu", "grouped", "multi-query+qk-norm+value-residual+rope"],
)
def test_every_step_of_a_variant_has_its_hand_rule_within_1e6_in_float64(options):
    config = GeneratorConfig(dim=16, n_heads=4, dim_hidden=24, n_blocks=2, max_length=32, dropout=0.0, **options)
    _every_step_has_its_hand_rule(_as_double(config.replace(norm_first=True, final_norm=True, bias=False)))


def test_the_llama_style_preset_trains_traces_passes_the_exercises_and_is_named_by_gpt2_export(files, tmp_path):  # noqa: F811
    out = tmp_path / "llama"
    run = _trained(files, out, "--preset", "llama-style", *sets("kv_heads=2"))
    c = run.config
    assert (c.norm, c.position, c.ffn, c.kv_heads, c.bias, c.qkv_bias, c.norm_first) == (
        "rms",
        "rope",
        "swiglu",
        2,
        False,
        False,
        True,
    )
    assert run.hyperparameters["train"]["optimizer"] == "muon"
    traced = run.trace("To be, or")
    kinds = {traced.traced[n].step.kind for n in traced.names()}
    assert {"repeat_heads", "product", "activation:silu", "norm:rms", "rotary"} <= kinds
    _every_step_has_its_hand_rule(_as_double(c))
    _every_exercise_passes(Source(run))
    lines = gpt2_differences(c)
    assert any(line.startswith("a SwiGLU feed-forward") for line in lines)
    assert any(line.startswith("grouped-query attention") and "2 key/value heads for 4 heads" in line for line in lines)
    assert all("\n" not in line for line in lines)
    prompt = torch.tensor(run.tokenizer.encode("To be"))
    cached = list(generate(run.model, prompt, 20, seed=3))
    plain = list(generate(run.model, prompt, 20, seed=3, path="no-cache"))
    assert cached == plain  # the cache of 2 key/value heads decodes what the whole window does
    assert math.isfinite(run.model(prompt[None]).sum().item())

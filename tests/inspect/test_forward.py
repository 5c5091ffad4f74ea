"""The forward trace: its tensors are the model's own forward, and each step is the posts' equation."""

import json
import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite import GeneratorConfig, build_model
from transformers_lite.families import FAMILIES
from transformers_lite.inspect.forward import ForwardTrace, TracedStep
from transformers_lite.inspect.readout import attention_distance, head_sweep, logit_lens
from transformers_lite.inspect.tracing import switch_off, trace_forward
from transformers_lite.layers.steps import Step
from transformers_lite.layers.trace import Place, Trace
from transformers_lite.optional import installed
from transformers_lite.tokenizers.char import CharTokenizer

from ..reliability.conftest import cli, files, runs  # noqa: F401 - fixtures reused here

TEXT = "To be, or not to be, that is the question."
TOKENIZER = CharTokenizer(sorted(set(TEXT)))


def _generator_run(**fields) -> SimpleNamespace:
    config = GeneratorConfig(vocab_size=len(TOKENIZER), max_length=64, **fields)
    return SimpleNamespace(
        model=build_model(config).eval(), config=config, tokenizer=TOKENIZER, family=FAMILIES[config.family]
    )


class _Explicit(Trace):
    """An active trace that keeps nothing: the forward takes the traced (explicit) path unrecorded."""

    def __call__(self, step, x, *inputs):
        return x

    def at(self, name, steps=None, **place):
        return self

    def declare(self, steps):
        return self


def _check_equations(trace: ForwardTrace, scope: str, n_heads: int, causal: bool, rotary: bool = False) -> None:
    v = trace[f"{scope}.attention.v"]
    read = trace.traced[f"{scope}.attention.scores"].reads  # Q and K, or with rotary positions Q′ and K′
    assert read == tuple(f"{scope}.attention.{s}{'_rotated' if rotary else ''}" for s in "qk")
    q, k = (trace[n] for n in read)  # (H, T, D)
    h, t, d = q.shape
    assert h == n_heads
    scores = trace[f"{scope}.attention.scores"]
    assert torch.allclose(scores, q @ k.transpose(-1, -2), atol=1e-5)  # (H, T, D) @ (H, D, S) -> (H, T, S)
    scaled = trace[f"{scope}.attention.scaled"]
    assert torch.allclose(scaled, scores / math.sqrt(d), atol=1e-6)
    weights = trace[f"{scope}.attention.weights"]
    assert torch.allclose(weights.sum(-1), torch.ones(h, t), atol=1e-5)
    if causal:
        assert (weights.triu(1) == 0).all()  # no position reads a later one
    assert torch.allclose(trace[f"{scope}.attention.heads"], weights @ v, atol=1e-5)  # (H, T, S) @ (H, S, D)
    merged = trace[f"{scope}.attention.merged"]
    assert torch.equal(merged, trace[f"{scope}.attention.heads"].transpose(0, 1).reshape(t, h * d))  # (T, H*D)


@settings(max_examples=25, deadline=None)
@given(
    norm_first=st.booleans(),
    position=st.sampled_from(["learned", "rope"]),
    n_heads=st.sampled_from([1, 2, 4]),
    n_blocks=st.integers(1, 3),
    length=st.integers(1, 40),
    seed=st.integers(0, 100),
)
def test_each_step_is_its_equation_and_the_traced_logits_are_the_forwards(
    norm_first, position, n_heads, n_blocks, length, seed
):
    torch.manual_seed(seed)
    run = _generator_run(
        dim=16, n_heads=n_heads, dim_hidden=32, n_blocks=n_blocks, norm_first=norm_first, position=position
    )
    text = (TEXT * 2)[:length]
    trace = trace_forward(run, text)
    ids = torch.tensor(TOKENIZER.encode(text))
    assert torch.equal(trace["tokens"], ids) and trace.tokens == list(text)
    with torch.no_grad():
        explicit = run.model(ids[None], trace=_Explicit())[0]  # the same code path, nothing recorded
        fused = run.model(ids[None])[0]  # the fused attention kernel
    assert torch.equal(trace["logits"], explicit)
    assert torch.allclose(trace["logits"], fused, atol=1e-5)
    assert torch.allclose(trace["probabilities"], torch.softmax(explicit, -1))
    for i in range(n_blocks):
        _check_equations(trace, f"blocks.{i}", n_heads, causal=True, rotary=position == "rope")
    if position == "learned":
        assert torch.allclose(trace["input"], trace["embedding"] + trace["position"])
    for step in trace.steps():  # every step says its shape, ours and the posts' (read backwards)
        assert len(step["shape"]) == len(step["axes"].strip("()").split(", ")) or step["shape"] == []
        assert step["post_axes"] == "(" + ", ".join(reversed(step["axes"].strip("()").split(", "))) + ")"


def test_the_residual_stream_adds_each_sublayer():
    run = _generator_run(dim=16, n_heads=2, dim_hidden=32, n_blocks=2, norm_first=False)
    trace = trace_forward(run, TEXT)
    assert torch.allclose(trace["blocks.0.attention_residual.sum"], trace["input"] + trace["blocks.0.attention.out"])
    hidden = trace["blocks.1.feed_forward.hidden"]
    assert hidden.shape == (len(TEXT), 32) and (hidden >= 0).all()  # after the ReLU
    norm = run.model.blocks[1].feed_forward_residual.norm  # post-norm: LayerNorm(x + sublayer(x))
    expected = F.layer_norm(trace["blocks.1.feed_forward_residual.sum"], (16,), norm.weight, norm.bias, norm.eps)
    assert torch.allclose(trace["blocks.1.feed_forward_residual.norm"], expected, atol=1e-6)
    ff = run.model.blocks[1].feed_forward
    assert torch.allclose(trace["blocks.1.feed_forward.out"], ff.dense2(hidden), atol=1e-6)


def test_switching_off_a_head_zeroes_it_and_changes_only_what_follows():
    torch.manual_seed(0)
    run = _generator_run(dim=16, n_heads=4, dim_hidden=32, n_blocks=2)
    plain = trace_forward(run, TEXT)
    off = trace_forward(run, TEXT, edits=switch_off(["blocks.1.attention.head.2", "blocks.1.attention.head.3"], 4))
    assert (off["blocks.1.attention.heads"][2:] == 0).all()
    assert (off["blocks.1.attention.merged"][:, 8:] == 0).all()  # heads 2 and 3 are channels 8..15
    assert torch.equal(off["blocks.0.attention_residual.sum"], plain["blocks.0.attention_residual.sum"])
    assert not torch.equal(off["logits"], plain["logits"])
    unit = trace_forward(run, TEXT, edits=switch_off(["blocks.0.feed_forward.hidden.unit.5"], 4))
    assert (unit["blocks.0.feed_forward.hidden"][:, 5] == 0).all()
    no_position = trace_forward(run, TEXT, edits=switch_off(["position"], 4))
    assert torch.equal(no_position["input"], no_position["embedding"])
    with pytest.raises(ValueError, match="head 4 is out of range"):
        switch_off(["blocks.0.attention.head.4"], 4)
    with pytest.raises(ValueError, match="no attention layer blocks.7.attention in this model"):
        trace_forward(run, TEXT, edits=switch_off(["blocks.7.attention.head.0"], 4))
    with pytest.raises(ValueError, match="switch off"):
        switch_off(["everything"], 4)


def test_every_family_traces_through_run_trace(runs):  # noqa: F811
    gen = tl.load(runs / "generator")
    trace = gen.trace("First Citizen")
    with torch.no_grad():
        fused = gen.model(trace["tokens"][None])[0]
    assert torch.allclose(trace["logits"], fused, atol=1e-5)

    cls = tl.load(runs / "classifier")
    review = "the box was superb for my family"
    trace = cls.trace(review)
    assert trace.classes and trace["probabilities"].shape == (len(trace.classes),)
    classified = torch.tensor(list(cls.classify(review)["probabilities"].values()))
    assert torch.allclose(trace["probabilities"], classified, atol=1e-4)  # classify rounds to 4 digits

    s2s = tl.load(runs / "seq2seq")
    trace = s2s.trace("alpha beta", target="beta alpha")
    assert trace.source_tokens[:2] == ["alpha", "beta"] and trace.tokens[1:] == ["beta", "alpha"]
    cross = trace["decoder.blocks.0.cross_attention.weights"]  # (H, T, S): targets over the source
    assert cross.shape[1:] == (len(trace.tokens), len(trace.source_tokens))
    data = json.loads(json.dumps(trace.to_json("decoder.blocks.0")))
    names = [s["name"] for s in data["steps"]]
    assert "decoder.blocks.0.cross_attention.weights" in names and "encoder.embedding" in names
    assert not any(n.startswith(("encoder.blocks.", "decoder.blocks.1")) for n in names)
    assert data["blocks"][0] == "encoder.blocks.0" and "decoder.blocks.0" in data["blocks"]


def test_inspect_trace_writes_the_json_and_a_figure_per_block(cli, runs, tmp_path):  # noqa: F811
    out = tmp_path / "trace"
    result = cli(
        "inspect",
        "trace",
        runs / "generator",
        "--text",
        "Speak",
        "--head",
        "1",
        "--out",
        out,
        "--switch-off",
        "blocks.0.attention.head.0",
    )
    assert result.code == 0, result.err
    data = json.loads((out / "trace.json").read_text())
    assert data["tokens"] == list("Speak")
    heads = next(s for s in data["steps"] if s["name"] == "blocks.0.attention.heads")["values"]
    assert all(x == 0 for row in heads[0] for x in row)
    if installed("matplotlib"):
        assert (out / "trace_blocks_0.png").stat().st_size > 1000
    # without --src, a translator traces the first sentence of its own validation data
    from transformers_lite.evaluation.translation import recorded_validation_pairs

    assert cli("inspect", "trace", runs / "seq2seq", "--out", out / "s2s").code == 0
    loaded = tl.load(runs / "seq2seq")
    first = recorded_validation_pairs(loaded)[0][0]
    traced = json.loads((out / "s2s" / "trace.json").read_text())["source_tokens"]
    assert traced == loaded.trace(first).source_tokens
    bad = cli("inspect", "trace", runs / "seq2seq", "--src", "", "--out", out)
    assert bad.code != 0 and "needs a non-empty --src" in bad.err
    bad = cli("inspect", "trace", runs / "generator", "--head", "99", "--out", out)
    assert bad.code != 0 and "--head 99 is out of range" in bad.err


def _attention(block: int, kind: str = "softmax", reads: tuple[str, ...] = ()) -> TracedStep:
    """A self-attention step of block ``block`` as a trace records it (the distance asks for the role of
    self-attention's weights)."""
    step = Step(kind, "HTT", "", "", "", role="weights" if kind == "softmax" else "")
    return TracedStep(step, kind, Place(f"blocks.{block}.attention", f"blocks.{block}"), reads)


def test_attention_distance_of_known_patterns():
    t = 9
    self_only = torch.eye(t).expand(2, t, t)  # (H, T, T): each position reads itself
    uniform = torch.ones(t, t).tril()
    uniform = (uniform / uniform.sum(-1, keepdim=True)).expand(2, t, t)  # position i reads 0..i alike
    names = {"blocks.0.attention.weights": self_only, "blocks.1.attention.weights": uniform}
    trace = ForwardTrace("generator", list("abcdefghi"), names, {n: _attention(int(n[7])) for n in names})
    distance = attention_distance(trace)
    assert distance["blocks.0.attention"] == [0.0, 0.0]
    assert distance["blocks.1.attention"] == [pytest.approx((t - 1) / 4, abs=1e-3)] * 2  # mean over i of i/2
    even = attention_distance(trace, uniform=True)  # no mask recorded: every key may be read
    assert even["blocks.0.attention"] == [
        pytest.approx(sum(abs(i - j) for i in range(t) for j in range(t)) / t**2, abs=1e-3)
    ]


def test_the_even_attention_baseline_is_the_causal_models_uniform_reader(runs):  # noqa: F811
    trace = tl.load(runs / "generator").trace("First Citizen")
    t = len("First Citizen")
    even = attention_distance(trace, uniform=True)
    assert even and all(v == [pytest.approx((t - 1) / 4, abs=1e-3)] for v in even.values())  # i reads 0..i alike


def test_the_last_row_of_the_logit_lens_is_the_models_prediction(runs):  # noqa: F811
    for name, text, target in (
        ("generator", "First Citizen", None),
        ("classifier", "the box was superb", None),
        ("seq2seq", "alpha beta", "beta alpha"),
    ):
        run = tl.load(runs / name)
        trace = run.trace(text, target=target)
        lens = logit_lens(run, trace, top=3)
        assert lens[0]["at"] == "input" and len(lens) >= 2
        final = trace["probabilities"] if name == "classifier" else trace["probabilities"][-1]
        best = torch.topk(final, 3)
        assert [t["id"] for t in lens[-1]["top"]] == best.indices.tolist(), name
        assert [t["p"] for t in lens[-1]["top"]] == pytest.approx(best.values.tolist(), abs=1e-4), name


def test_attention_distance_over_validation_windows(cli, runs, tmp_path):  # noqa: F811
    result = cli("inspect", "trace", runs / "generator", "--text", "Speak", "--windows", "5", "--out", tmp_path)
    assert result.code == 0, result.err
    assert "validation windows of 16 tokens" in result.out  # TINY_GPT's context
    over = json.loads((tmp_path / "trace.json").read_text())["validation_attention_distance"]
    assert over["context"] == 16 and 1 <= over["windows"] <= 5
    assert all(0 <= d <= 15 for heads in over["heads"].values() for d in heads)
    bad = cli("inspect", "trace", runs / "classifier", "--text", "good", "--windows", "3", "--out", tmp_path)
    assert bad.code != 0 and "reads a generator's text" in bad.err


def test_a_member_block_of_an_ensemble_keeps_that_members_outer_steps(runs):  # noqa: F811
    trace = tl.load(runs / "classifier").trace("the box was good")
    names = trace.select("members.1.encoder.blocks.0")
    assert "members.1.encoder.embedding" in names and "members.1.head.pooled" in names
    assert "members.1.encoder.blocks.0.attention.weights" in names and "probabilities" in names
    assert not any(n.startswith(("members.0.", "members.2.")) for n in names)


FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "runs_0.2"


def test_a_single_logit_classifier_gives_two_probabilities_everywhere(runs):  # noqa: F811
    run = tl.load(runs / "classifier")
    config = run.config.replace(n_labels=1)
    single = SimpleNamespace(
        model=build_model(config).eval(), config=config, tokenizer=run.tokenizer, family=FAMILIES[config.family]
    )
    trace = trace_forward(single, "the box was good")
    p = torch.sigmoid(trace["logits"][0])
    assert torch.allclose(trace["probabilities"], torch.stack([1 - p, p]))
    lens = logit_lens(single, trace, top=2)
    assert lens[-1]["top"][0]["p"] == pytest.approx(float(trace["probabilities"].max()), abs=1e-4)


def test_what_cannot_be_switched_off_is_refused_and_position_means_every_position(runs):  # noqa: F811
    with pytest.raises(ValueError, match="shown, not switched off"):
        switch_off(["tokens.unit.0"], 2)
    with pytest.raises(ValueError, match="shown, not switched off"):
        switch_off(["blocks.0.attention.mask.unit.1"], 2)
    s2s = tl.load(runs / "seq2seq")
    off = s2s.trace("alpha beta", target="beta alpha", switch_off_steps=["position"])
    assert (off["encoder.position"] == 0).all() and (off["decoder.position"] == 0).all()
    assert torch.equal(off["encoder.input"], off["encoder.embedding"])
    one = s2s.trace("alpha beta", target="beta alpha", switch_off_steps=["encoder.position"])
    assert (one["encoder.position"] == 0).all() and not (one["decoder.position"] == 0).all()


def test_padding_queries_are_left_out_of_the_attention_distance():
    t = 6
    w = torch.eye(t).expand(1, t, t).clone()  # (H, T, T): each real position reads itself (distance 0)
    w[0, 4:] = 0
    w[0, 4:, :4] = 0.25  # padding queries read the real keys far away
    mask = torch.tensor([0.0] * 4 + [-math.inf] * 2).expand(1, t, t)  # M over (H, T, S): 4 words, 2 pads
    steps = {
        "blocks.0.attention.mask": _attention(0, "mask"),
        "blocks.0.attention.masked": _attention(0, "masked", ("blocks.0.attention.scaled", "blocks.0.attention.mask")),
        "blocks.0.attention.weights": _attention(0, "softmax", ("blocks.0.attention.masked",)),
    }
    tensors = {"blocks.0.attention.mask": mask, "blocks.0.attention.masked": w, "blocks.0.attention.weights": w}
    trace = ForwardTrace("classifier", list("abcdef"), tensors, steps)
    assert attention_distance(trace) == {"blocks.0.attention": [0.0]}


def test_a_masked_language_model_traces_and_reads_out_but_does_not_sweep():
    run = tl.load(FIXTURES / "mlm", trust_edited=True)
    trace = run.trace("the coffee was great")
    lens = logit_lens(run, trace, position=1, top=1)
    best = int(trace["probabilities"][1].argmax())
    assert lens[0]["at"] == "input" and lens[-1]["top"][0]["id"] == best
    with pytest.raises(ValueError, match="a sweep ranks heads by the rise of the loss; a mlm run has no loss"):
        head_sweep(run, "the coffee was great")


def test_a_sweep_over_validation_windows_averages_each_heads_rise(runs):  # noqa: F811
    from transformers_lite.inspect.readout import _validation_windows, validation_head_sweep

    run = tl.load(runs / "generator")
    over = validation_head_sweep(run, 3)
    val, starts, t = _validation_windows(run, 3)
    one = [head_sweep(run, run.tokenizer.decode(val[s : s + t].tolist(), skip_special=False)) for s in starts]
    head = over["heads"][0]["head"]
    rises = [next(r["rise"] for r in sweep["heads"] if r["head"] == head) for sweep in one]
    assert over["windows"] == len(starts) and over["heads"][0]["rise"] == pytest.approx(
        sum(rises) / len(rises), abs=1e-5
    )
    assert [r["rise"] for r in over["heads"]] == sorted((r["rise"] for r in over["heads"]), reverse=True)
    with pytest.raises(ValueError, match="validation windows are a generator's text; a classifier run has none"):
        validation_head_sweep(tl.load(runs / "classifier"), 2)


def test_a_text_longer_than_the_context_is_said_to_be_cut(runs):  # noqa: F811
    run = tl.load(runs / "generator")
    long = "Before we proceed " * 40
    traced = run.trace(long)
    assert traced.notes == [
        f"the model reads the last {run.config.max_length} of the text's {len(long)} tokens (its context)"
    ]
    assert run.trace("Before").notes == []


def test_words_the_model_does_not_know_and_an_empty_translation_are_said(runs):  # noqa: F811
    classifier = tl.load(runs / "classifier")
    unknown = classifier.tokenizer.shown(classifier.tokenizer.unk_id)
    assert classifier.trace("the box zzqqzzqq").notes == [
        f"the text has words the model never saw in training ('zzqqzzqq'; 1 token); each reads as the unknown "
        f"symbol {unknown}"
    ]
    assert classifier.trace("the box").notes == []
    translator = tl.load(runs / "seq2seq")
    traced = translator.trace("alpha beta gamma")
    assert traced.tokens == ["<bos>"]  # the fixture's few-step translator ends at once: nothing for the decoder
    assert any("own translation is empty" in n for n in traced.notes)
    assert not any("empty" in n for n in translator.trace("alpha beta", target="beta alpha").notes)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(length=st.integers(2, 40), position=st.integers(-45, 45))
def test_a_position_is_read_among_what_the_model_reads_or_refused_saying_so(runs, length, position):  # noqa: F811
    """A position asked of a trace (the logit lens, a generator's loss) counts the tokens the model reads;
    one outside them is refused, and when the text was longer than the context the refusal says which
    of the text's tokens the model reads, as an accepted position's description says where it sits."""
    run = tl.load(runs / "generator")
    text = ("Before we proceed " * 3)[:length]  # one token a character; the context is 16
    read = min(length, 16)
    trace = run.trace(text)
    if -read <= position < read:
        assert len(logit_lens(run, trace, position)) >= 2
    else:
        with pytest.raises(ValueError, match=rf"position {position} is outside the positions the model reads"):
            logit_lens(run, trace, position)
    if 0 <= position < read - 1:
        target = run.backward_trace(text, position=position).target
        assert target.startswith(
            f"cross-entropy of the next token {trace.tokens[position + 1]!r} at position {position}"
        )
        assert (f"the text's token {length - 16 + position} of {length}" in target) == (length > 16)
        return
    with pytest.raises(ValueError) as err:
        run.backward_trace(text, position=position)
    message = str(err.value)
    assert f"position {position}" in message or "must be 0 or more" in message
    if position >= read - 1:
        assert f"(0..{read - 2})" in message and (f"the text has {length} tokens" in message) == (length > 16)


def test_a_position_asked_of_a_loss_without_positions_is_refused(runs):  # noqa: F811
    with pytest.raises(ValueError, match="position 2: a classifier's loss scores the class of the whole text"):
        tl.load(runs / "classifier").backward_trace("the box was superb", position=2)

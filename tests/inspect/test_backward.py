"""The backward trace: autograd's gradient at every step of the forward, the posts' hand-derived rules
beside it on the same numbers, and nothing changed in the model."""

import json
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite import ClassifierConfig, GeneratorConfig, build_model
from transformers_lite.evaluation.prediction import class_names
from transformers_lite.families import FAMILIES
from transformers_lite.inspect.backward import trace_backward
from transformers_lite.tokenizers import WordTokenizer
from transformers_lite.tokenizers.char import CharTokenizer

from ..reliability.conftest import cli, files, runs  # noqa: F401 - fixtures reused here

TEXT = "To be, or not to be, that is the question."
TOKENIZER = CharTokenizer(sorted(set(TEXT)))


def _generator_run(**fields) -> SimpleNamespace:
    config = GeneratorConfig(vocab_size=len(TOKENIZER), max_length=64, dropout=0.0, **fields)
    torch.manual_seed(0)
    return SimpleNamespace(
        model=build_model(config).eval(), config=config, tokenizer=TOKENIZER, family=FAMILIES[config.family]
    )


@settings(max_examples=15, deadline=None)
@given(
    blocks=st.integers(1, 2),
    heads=st.sampled_from([1, 2, 4]),
    length=st.integers(2, 20),
    position=st.none() | st.integers(0, 18),
)
def test_every_step_of_the_seed_gpt_has_its_hand_derived_gradient(blocks, heads, length, position):
    """Post 004's GPT (post-norm, learned positions, ReLU): each step's gradient from the posts' rules
    equals autograd's, from the logits down to the embedding table and the position table."""
    run = _generator_run(dim=16, n_heads=heads, dim_hidden=32, n_blocks=blocks)
    text = TEXT[:length]
    position = None if position is None or position >= length - 1 else position
    result = trace_backward(run, text, position=position)
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(
        result.checks
    )  # every step, every parameter
    worst = {n: c["hand_max_diff"] for n, c in result.checks.items() if c["hand_max_diff"] > 1e-5}
    assert not worst, worst
    assert all(p.grad is None for p in run.model.parameters())  # the model is left as it was


@settings(max_examples=10, deadline=None)
@given(
    activation=st.sampled_from(["relu", "gelu"]),
    final_norm=st.booleans(),
    tie=st.booleans(),
    length=st.integers(2, 20),
    position=st.none() | st.integers(0, 18),
)
def test_every_step_of_a_pre_norm_gpt_has_its_hand_derived_gradient(activation, final_norm, tie, length, position):
    """baby-gpt's kind (pre-norm, GELU, a final norm, the table shared with the output layer): the
    residual stream, the norms' inputs and the shared table get their gradients from the posts' rules too."""
    run = _generator_run(
        dim=16,
        n_heads=2,
        dim_hidden=32,
        n_blocks=2,
        norm_first=True,
        activation=activation,
        final_norm=final_norm,
        tie_embeddings=tie,
    )
    text = TEXT[:length]
    position = None if position is None or position >= length - 1 else position
    result = trace_backward(run, text, position=position)
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(result.checks)
    assert result.checks["param:embedding.weight"]["kinds"] == (["embedding", "tied_output"] if tie else ["embedding"])
    worst = {n: c["hand_max_diff"] for n, c in result.checks.items() if c["hand_max_diff"] > 1e-5}
    assert not worst, worst
    data = result.to_json()
    for step in data["steps"]:  # the hand values are sent beside autograd's
        hand, mine = torch.tensor(step["hand_values"]), torch.tensor(step["values"])
        assert torch.allclose(hand, mine, atol=2e-5 * max(float(mine.abs().max()), 1e-12) + 1e-9), step["name"]


def test_the_parameters_get_the_training_losss_gradient():
    """With every position's loss, the parameter gradients are those of training's loss on the same window."""
    run = _generator_run(dim=16, n_heads=2, dim_hidden=32, n_blocks=2)
    result = trace_backward(run, TEXT[:12])
    ids = torch.tensor(TOKENIZER.encode(TEXT[:12]))
    before = {n: p.detach().clone() for n, p in run.model.named_parameters()}
    loss = F.cross_entropy(run.model(ids[None, :-1])[0], ids[1:])  # the causal model on T - 1 tokens
    loss.backward()
    assert abs(loss.item() - result.loss) < 1e-6
    for name, p in run.model.named_parameters():
        assert torch.allclose(p.grad, result.params[name], atol=1e-6), name
        assert torch.equal(p.detach(), before[name])
    attribution = (result.grads["embedding"] * result.forward["embedding"]).sum(-1)
    assert result.attribution == [round(float(x), 6) for x in attribution]


@pytest.mark.parametrize("members, labels, head", [(1, 3, "mean"), (2, 3, "mean"), (1, 1, "mean"), (1, 5, "flatten")])
def test_a_classifier_and_an_ensemble(members, labels, head):
    """Every step has its hand-derived gradient: the head (flatten or mean pooling), an ensemble's mixture
    of its members' logits, the blocks and the tables (an ensemble of one logit per member aside)."""
    words = "good bad fine awful great poor".split()
    tokenizer = WordTokenizer(words, "[UNK]", pad="[PAD]")
    config = ClassifierConfig(
        vocab_size=len(tokenizer),
        max_length=8,
        dim=16,
        n_heads=2,
        dim_hidden=32,
        n_labels=labels,
        dropout=0.0,
        head=head,
        members=members,
        pad_id=tokenizer.pad_id,
    )
    torch.manual_seed(0)
    run = SimpleNamespace(
        model=build_model(config).eval(), config=config, tokenizer=tokenizer, family=FAMILIES[config.family]
    )
    names = class_names(SimpleNamespace(label_names=(), n_labels=2) if labels == 1 else config)
    result = trace_backward(run, "good fine awful", target=names[-1])
    assert result.checks["logits"]["hand_max_diff"] < 1e-6 and result.target.endswith(f"{names[-1]!r}")
    assert max(c["hand_max_diff"] for c in result.checks.values()) < 1e-5
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(result.checks)
    assert len(result.attribution) == (3 if head == "mean" else 8) and result.loss > 0
    with pytest.raises(ValueError, match="not one of the run's classes"):
        trace_backward(run, "good", target="nope")


def test_the_translator_through_autograd_and_the_json(runs):  # noqa: F811
    run = tl.load(runs / "seq2seq")
    result = run.backward_trace("alpha beta", target="beta alpha")
    data = result.to_json()
    names = [s["name"] for s in data["steps"]]
    assert names[0] == "logits" and "encoder.embedding" in names  # the gradient reaches the source rows
    assert data["loss"] == result.loss > 0 and json.dumps(data)
    assert all(s["hand_max_diff"] < 1e-5 for s in data["steps"])  # every step: cross-attention, the scaled tables
    memory = [s for s in data["steps"] if "decoder.blocks.0.cross_attention.k" in s.get("from", [])]
    assert memory[0]["name"].startswith("encoder.")  # the encoder's output gets its gradient from every block's K, V
    assert "decoder.blocks.0.cross_attention.v" in memory[0]["from"]
    assert all(p["hand_max_diff"] < 1e-5 for p in data["parameters"])


def test_the_translators_own_translation_is_its_default_target(runs):  # noqa: F811
    """Without a target the loss scores the model's greedy translation as text (no BOS tokens in it),
    one step scores that same target after the step, and gradient x input runs over the source tokens."""
    run = tl.load(runs / "seq2seq")
    result = run.backward_trace("alpha beta gamma")
    assert "its own greedy translation" in result.target
    assert "<bos>" not in result.forward.tokens[1:]
    assert len(result.attribution) == len(result.forward.source_tokens)
    kept = FAMILIES["seq2seq"].kept_target(run, result.forward)
    step = run.take_step("alpha beta gamma")
    assert step["loss_before"] == pytest.approx(result.loss)
    assert step["loss_before"] == pytest.approx(run.backward_trace("alpha beta gamma", target=kept).loss)
    assert step["at"].startswith("the next token after position")


def test_the_cli_writes_backward_json(cli, runs, tmp_path):  # noqa: F811
    result = cli("inspect", "backward", runs / "generator", "--text", "Before we", "--position", "2", "--out", tmp_path)
    assert result.code == 0, result.err
    assert result.out.startswith("loss ") and "hand-derived (softmax)" in result.out
    data = json.loads((tmp_path / "backward.json").read_text())
    assert data["target"].startswith("cross-entropy of the next token 'o' at position 2")
    bad = cli("inspect", "backward", runs / "generator", "--text", "Before", "--position", "99", "--out", tmp_path)
    assert bad.code == 1 and "position 99 is outside the positions the model reads (0..4)" in bad.err


def test_one_step_moves_a_copy_and_never_the_run(runs):  # noqa: F811
    """The step is AdamW's first on this example alone: the loss falls, the moved probabilities are read
    from the forward before and after it, and the run's weights are untouched."""
    run = tl.load(runs / "generator")
    weights = {n: t.clone() for n, t in run.model.state_dict().items()}
    result = run.take_step("Before we proceed", position=5)
    assert (
        result["loss_after"]
        < result["loss_before"]
        == pytest.approx(run.backward_trace("Before we proceed", position=5).loss)
    )
    assert all(torch.equal(weights[n], t) for n, t in run.model.state_dict().items())
    assert all(p.grad is None for p in run.model.parameters())
    probabilities = run.trace("Before we proceed")["probabilities"][5]
    first = result["moved"][0]
    shown = [run.tokenizer.shown(i) for i in range(len(probabilities))]
    assert first["before"] == round(float(probabilities[shown.index(first["label"])]), 5)
    classifier = tl.load(runs / "classifier").take_step("the box was superb")
    assert {m["label"] for m in classifier["moved"]} == {"1 star", "2 stars", "3 stars", "4 stars", "5 stars"}
    token = result_token(run, "Before we proceed", 5)  # the text's 17 characters: the model reads the last 16
    where = "(the text's token 6 of 17: the model reads its last 16)"
    assert result["at"] == f"the next token after position 5 ({token!r}) {where}"
    assert classifier["at"] == "the classes"


def result_token(run, text, position):
    return run.trace(text).tokens[position]


def test_backward_traces_at_once_on_one_model_are_those_one_at_a_time():
    """Two browser tabs: backward passes on one loaded model in several threads at once give each its own
    gradients (nothing is written to the model, not even ``.grad``), equal to the same passes in turn."""
    from concurrent.futures import ThreadPoolExecutor

    run = _generator_run(dim=16, n_heads=2, dim_hidden=32, n_blocks=2)
    texts = [TEXT[i : i + 12] for i in range(8)]
    alone = [trace_backward(run, t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda t: trace_backward(run, t), texts * 3))
    for i, result in enumerate(together):
        expected = alone[i % len(texts)]
        assert result.loss == expected.loss
        assert all(torch.equal(result.params[n], g) for n, g in expected.params.items())
        assert all(torch.equal(result.grads[n], g) for n, g in expected.grads.items())
    assert all(p.grad is None for p in run.model.parameters())


@pytest.mark.parametrize(
    "preset", ["post-gpt", "baby-gpt", "llama-style", "post-classifier", "classifier", "seq2seq-small"]
)
def test_every_step_and_parameter_of_each_presets_model_has_its_hand_rule(preset):
    """The rules by kind cover each preset's model as it is (its vocabulary made small): every step with
    a gradient and every parameter has its hand-derived gradient, within float32 rounding of autograd's."""
    from transformers_lite import get_preset

    config = get_preset(preset).model
    words = WordTokenizer([f"w{i}" for i in range(36)], "<unk>", pad="<pad>", bos="<bos>", eos="<eos>")
    tokenizer = TOKENIZER if config.family == "generator" else words
    sizes = {f: len(tokenizer) for f in ("vocab_size", "src_vocab_size", "tgt_vocab_size") if hasattr(config, f)}
    config = config.replace(**sizes, **({} if config.family == "generator" else {"pad_id": words.pad_id}))
    torch.manual_seed(0)
    model = build_model(config).eval()
    run = SimpleNamespace(
        model=model, config=config, tokenizer=tokenizer, src_tokenizer=tokenizer, family=FAMILIES[config.family]
    )
    text = TEXT[:24] if config.family == "generator" else "w1 w2 w3 w4 w5"
    target = (
        class_names(config)[0] if config.family == "classifier" else "w3 w2 w1" if config.family == "seq2seq" else None
    )
    result = trace_backward(run, text, target=target)
    assert set(result.grads) | {f"param:{n}" for n in result.params} == set(result.checks)
    worst = {n: c["hand_max_diff"] for n, c in result.checks.items() if c["hand_max_diff"] > 1e-6}
    assert not worst, worst

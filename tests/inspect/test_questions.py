"""Predict, then reveal: every step of every family gets a question, the same for a seed, answerable from
what the walk showed before it (its values as the page shows them, rounded) and right about this run."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite.inspect.report import trace_report

from ..reliability.conftest import files, runs  # noqa: F401 - fixtures reused here

TEXTS = {"generator": "First Citizen:\nBefore we", "classifier": "the box was superb", "seq2seq": "alpha beta gamma"}


def _report(runs, family, seed):  # noqa: F811
    run = tl.load(runs / family)
    return trace_report(run, TEXTS[family], seed=seed)[1]


def _value(steps, name, index):
    v = steps[name]["values"]
    for i in index:
        v = v[i]
    return v


@pytest.mark.parametrize("family", ["generator", "classifier", "seq2seq"])
def test_every_step_has_a_question_answerable_from_the_steps_before_it(runs, family):  # noqa: F811
    out = _report(runs, family, seed=3)
    order = [o["name"] for o in out["outline"]]
    steps = {s["name"]: s for s in out["steps"]}
    asked = out["questions"]
    assert set(asked) == set(order)  # every step of every kind
    for name, q in asked.items():
        assert all(order.index(u) < order.index(name) for u in q["uses"]), (name, q)  # shown before it
        assert q["kind"] in ("value", "choice", "shape", "sign")
        if q["kind"] == "value":  # derivable from the values shown, as the page rounds them
            shown = [_value(steps, u, q["index"]) for u in q["uses"]]
            if "tanh" in q["prompt"]:
                c = float(q["prompt"].split(" = ")[1].split(" ")[0])
                derived = c * math.tanh(shown[0] / c)
            elif "sin(" in q["prompt"]:
                derived = math.sin(q["index"][0])
            elif "÷ √" in q["prompt"]:
                derived = shown[0] / math.sqrt(int(q["prompt"].split("÷ √")[1].split(" ")[0]))
            else:
                derived = sum(shown)
            assert abs(derived - q["answer"]) <= q["tolerance"], (name, q, derived)
            assert abs(_value(steps, name, q["index"]) - q["answer"]) <= q["tolerance"]  # the map then agrees
        elif q["kind"] == "choice" and q["uses"] and "which key" in q["prompt"]:
            row = _value(steps, q["uses"][0], q["index"])
            finite = [(v if v is not None else -math.inf) for v in row]
            assert finite[q["answer"]] == max(finite), (name, q)
        elif q["kind"] == "shape":
            assert q["answer"] == steps[name]["shape"] or q["answer"] == steps[name]["shape"][1:]
    kinds = {q["kind"] for q in asked.values()}
    assert {"value", "choice", "shape"} <= kinds, kinds


def test_a_generators_walk_asks_of_its_scores_its_weights_and_its_next_token(runs):  # noqa: F811
    asked = _report(runs, "generator", seed=0)["questions"]
    by_kind = {}
    out = _report(runs, "generator", seed=0)
    for o in out["outline"]:
        by_kind.setdefault(o["kind"], asked[o["name"]])
    assert by_kind["scale"]["kind"] == "value" and "÷ √" in by_kind["scale"]["prompt"]
    assert by_kind["softmax"]["kind"] == "choice" and "largest weight" in by_kind["softmax"]["prompt"]
    assert by_kind["mask"]["kind"] == "choice" and by_kind["residual_sum"]["kind"] in ("value", "sign")
    probabilities = asked["probabilities"]
    assert "which token gets the largest probability" in probabilities["prompt"]
    assert probabilities["uses"] == ["logits"]


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_seed_gives_the_same_questions_and_another_seed_others(runs, seed):  # noqa: F811
    first, again = _report(runs, "generator", seed)["questions"], _report(runs, "generator", seed)["questions"]
    assert first == again
    other = _report(runs, "generator", seed + 1)["questions"]
    assert any(first[n].get("index") != other[n].get("index") for n in first)


def test_a_token_to_choose_is_named_by_its_text_as_the_bars_name_it(runs):  # noqa: F811
    """The next-token question offers tokens as the learner reads them (the tokenizer's text), not their ids."""
    run = tl.load(runs / "generator")
    asked = trace_report(run, TEXTS["generator"], seed=0)[1]["questions"]["probabilities"]
    assert asked["choices"] == [run.tokenizer.shown(i) for i in asked["choice_ids"]]
    assert asked["choices"] != [str(i) for i in asked["choice_ids"]]

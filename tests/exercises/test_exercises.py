"""The exercises' checker is honest: each reference solution passes and each stub fails, on the built-in
model and on a trained run; a wrong answer is named at its first differing element, and the four common
mistakes (a flipped sign, a dropped transpose, a missing 1/N, a softmax over the wrong axis) by cause."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite.exercises import EXERCISES, Source, exercise
from transformers_lite.exercises import catalog as c
from transformers_lite.exercises.checker import check

from ..reliability.conftest import cli, files, runs  # noqa: F401 - fixtures reused here

BUILT_IN = Source()


def _stub(e):
    space = {}
    exec(e.stub(), space)  # noqa: S102 - the file a learner is given
    return space[e.function]


def test_every_reference_passes_and_every_stub_fails_on_the_built_in_model_and_a_trained_run(runs):  # noqa: F811
    trained = Source(tl.load(runs / "generator"))
    for source in (BUILT_IN, trained):
        for e in EXERCISES:
            given_ = e.inputs(source)
            verdict = check(e, e.solution, given_)
            assert verdict.passed, (e.name, source.what, verdict.message)
            stub = check(e, _stub(e), given_)
            assert not stub.passed and "not implemented" in stub.message, (e.name, stub.message)


def _verdict(name, function):
    e = exercise(name)
    return check(e, function, e.inputs(BUILT_IN))


def test_the_four_common_mistakes_are_named_by_cause_and_place():
    sign = _verdict("dense-backward", lambda x, w, b, dy: (-(dy @ w), dy.T @ x, dy.sum(0)))
    assert not sign.passed and sign.message.startswith("dx[0, 0] is ") and "flipped sign" in sign.cause
    transposed = _verdict("dense-backward", lambda x, w, b, dy: (dy @ w, x.T @ dy, dy.sum(0)))
    assert not transposed.passed and transposed.message.startswith("dw[") and "transpose" in transposed.cause
    n = len(exercise("cross-entropy-backward").inputs(BUILT_IN)["y"])
    unscaled = _verdict("cross-entropy-backward", lambda z, y: exercise("cross-entropy-backward").solution(z, y) * n)
    assert not unscaled.passed and f"1/{n}" in unscaled.cause and unscaled.message.startswith("dz[0, 0] is ")
    columns = _verdict("softmax-forward", lambda s: torch.softmax(s, -2))
    assert not columns.passed and "wrong axis" in columns.cause and "relative error" in columns.message


def test_a_wrong_shape_an_error_and_a_nan_are_each_said_plainly():
    shape = _verdict("relu-backward", lambda a, dy: dy[:, :3])
    assert "da has shape" in shape.message and "it should be" in shape.message
    error = _verdict("relu-backward", lambda a, dy: a.no_such_method())
    assert error.message.startswith("relu_backward raised AttributeError") and "line" in error.message
    nan = _verdict("relu-backward", lambda a, dy: dy * float("nan"))
    assert "not a finite number" in nan.message
    count = _verdict("dense-backward", lambda x, w, b, dy: dy @ w)
    assert "should return dx, dw, db" in count.message


@settings(max_examples=40, deadline=None)
@given(e=st.sampled_from(EXERCISES), which=st.integers(0, 9), at=st.floats(0, 1, exclude_max=True))
def test_any_single_wrong_element_is_the_one_named(e, which, at):
    given_ = e.inputs(BUILT_IN)
    right = [
        t.clone()
        for t in (lambda r: r if isinstance(r, tuple) else (r,))(e.solution(**{k: given_[k] for k in e.arguments}))
    ]
    k = which % len(right)
    flat = int(at * right[k].numel())
    wrong = [t.clone().contiguous() for t in right]
    wrong[k].view(-1)[flat] += 1.0 + right[k].abs().max()  # one element clearly off
    index = [int(i) for i in torch.unravel_index(torch.tensor(flat), right[k].shape)]
    verdict = check(e, lambda *_: tuple(wrong) if len(wrong) > 1 else wrong[0], given_)
    assert not verdict.passed
    assert verdict.message.startswith(f"{e.returns[k]}{index} is "), (e.name, verdict.message)
    # the map of the wrong result outlines exactly that cell, in the matrix that holds it
    cells = verdict.cells
    if cells is not None:
        lead, (r, c) = index[:-2], ([0, *index] if len(index) == 1 else index)[-2:]
        assert cells["name"] == e.returns[k] and cells["slice"] == lead
        assert sum(map(sum, cells["wrong"])) == 1 and cells["wrong"][r][c] == 1
        assert cells["difference"][r][c] == pytest.approx(1.0 + float(right[k].abs().max()), rel=1e-5)


def test_the_command_line_path_list_show_check_hint_solution(cli, tmp_path, monkeypatch, runs):  # noqa: F811
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    r = cli("exercise", "list")
    code, out = r.code, r.out
    assert code == 0 and "1. [    ] dense-forward" in out and f"0 of {len(EXERCISES)} done" in out
    r = cli("exercise", "show", "dense-backward")
    code, out = r.code, r.out
    assert code == 0 and (tmp_path / "dense_backward.py").is_file() and "y = x Wᵀ + b" in out
    assert "∂W = ∂yᵀ x" not in out and "Asked: ∂x, ∂W and ∂b" in out  # the answer is the last hint's
    r = cli("exercise", "check", "dense-backward", "dense_backward.py")
    code, out = r.code, r.out
    assert code == 1 and "not implemented" in out
    solved = (
        (tmp_path / "dense_backward.py")
        .read_text()
        .replace("    raise NotImplementedError  # your code here", "    return dy @ w, dy.T @ x, dy.sum(0)")
    )
    (tmp_path / "dense_backward.py").write_text(solved)
    r = cli("exercise", "check", "dense-backward", "dense_backward.py", "--run", str(runs / "generator"))
    code, out = r.code, r.out
    assert code == 0 and out.startswith("PASS "), (out, r.err)
    r = cli("exercise", "list")
    code, out = r.code, r.out
    assert "[done] dense-backward" in out and f"1 of {len(EXERCISES)} done" in out
    hints = [cli("exercise", "hint", "softmax-backward").out for _ in range(4)]
    assert [h.count("hint ") for h in hints] == [1, 2, 3, 3]
    r = cli("exercise", "solution", "softmax-backward")
    code, out = r.code, r.out
    assert code == 0 and "def softmax_backward(p, dp):" in out and "ops." not in out
    r = cli("exercise", "show", "no-such")
    code, err = r.code, r.err
    assert code != 0 and "no exercise 'no-such'" in err


def test_no_statement_gives_the_answers_formula_and_its_last_hint_does():
    for e in EXERCISES:
        last = e.hints[-1]
        assert e.solution.__name__ == e.function
        formula = last.split(": ", 1)[-1]
        assert formula not in e.statement() and "=" in last, (e.name, last)
    assert "∂W = ∂yᵀ x" in exercise("dense-backward").hints[-1]
    assert "∂W" not in exercise("dense-backward").statement().split("Asked:")[0]


@pytest.mark.parametrize(
    "variance",
    [
        "x.var(-1, keepdim=True)",
        "torch.var(x, dim=-1, keepdim=True)",
        "x.var(-1, keepdim=True, correction=1)",
        "x.std(-1, keepdim=True) ** 2",
    ],
)
def test_a_variance_divided_by_c_minus_1_is_named_however_it_is_written(variance):
    code = f"mu = x.mean(-1, keepdim=True)\n        return gamma * (x - mu) / torch.sqrt({variance} + eps) + beta"
    space = {"torch": torch}
    exec(f"def f(x, gamma, beta, eps):\n        {code}", space)  # noqa: S102 - a learner's wrong answer
    verdict = _verdict("layer-norm-forward", space["f"])
    assert not verdict.passed and "C − 1" in verdict.cause
    posts = _verdict(
        "layer-norm-forward",
        lambda x, gamma, beta, eps: (
            gamma * (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True, correction=0) + eps) + beta
        ),
    )
    assert "the posts' σ + ε" in posts.cause


def test_a_softmax_jvp_summed_over_the_wrong_axis_is_named_as_that():
    verdict = _verdict("softmax-backward", lambda p, dp: p * (dp - (dp * p).sum(-2, keepdim=True)))
    assert not verdict.passed and "Σ_j ∂p_j p_j taken down each column" in verdict.cause


def test_an_expected_zero_is_reported_by_how_far_off_not_by_a_huge_relative_error():
    verdict = _verdict("masked-scores-backward", lambda s, mask, dp: c.masked_scores_without_mask(s, mask, dp))
    assert not verdict.passed and "without the mask" in verdict.cause
    assert "relative error" not in verdict.message or "e+2" not in verdict.message


def test_a_muon_step_without_its_look_ahead_or_its_orthogonalisation_is_named():
    plain = _verdict("muon-step", c.muon_without_look_ahead)
    assert not plain.passed and plain.message.startswith("w_new[") and "look-ahead" in plain.cause
    sgd = _verdict("muon-step", c.muon_not_orthogonalised)
    assert not sgd.passed and "not orthogonalised" in sgd.cause
    assert _verdict("muon-step", exercise("muon-step").solution).passed

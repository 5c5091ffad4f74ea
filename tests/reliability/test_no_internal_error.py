"""Zero internal errors as a property: every option of the commands that use a run, given generated
values (numbers of every kind, words, empty and control characters), ends in a result (exit 0) or one
``tlite: error:`` line (exit 1, or 2 for what argparse refuses) — never an internal error or a
traceback (``cli`` fails the test on any exception escaping ``main``)."""

import argparse
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformers_lite.cli.main import build_parser

from ..helpers import TINY_GPT
from .conftest import TINY_CLS, TINY_S2S

VALUES = st.sampled_from(
    ["-1", "0", "1", "2", "3", "0.5", "nan", "inf", "-inf", "1e300", "-1e300", "1e-300", "9" * 30]
    + ["abc", "", " ", "\x00", "\u2028", "ROMEO:", "cpu", "cache", "no-cache", "mps", "cuda:9"]
)
# options that name files to read or write: the file readers have their own property tests
FILES = {"--input", "--output", "--text", "--data", "--src", "--ref", "--tgt", "--out"}
COMMANDS = {"generate": ("gen", []), "classify": ("cls", ["great box"]), "translate": ("s2s", ["alpha beta"])}
COMMANDS["evaluate"] = ("cls", [])
# inspect KIND RUN: the trace and the backward pass of every family (a classifier trace draws a PNG per
# ensemble member: slow, and its options are those of the others), the generator's plots
INSPECT = [("trace", "gen"), ("trace", "s2s"), ("backward", "gen"), ("backward", "cls")]
INSPECT += [("backward", "s2s"), ("next-token", "gen"), ("attention", "gen")]


def _options(command: str) -> list[tuple[str, bool]]:
    """``(option, takes_a_value)`` for every option of ``tlite COMMAND`` except the file options (and
    ``--out``, which every inspect case sets to a fresh folder)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for action in sub.choices[command]._actions:
        if action.option_strings and not isinstance(action, argparse._HelpAction):
            name = action.option_strings[-1]
            if name not in FILES:
                found.append((name, action.nargs != 0))
    return found


@pytest.fixture(scope="module")
def places(runs):
    return {"gen": runs / "generator", "cls": runs / "classifier", "s2s": runs / "seq2seq"}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_option_with_any_value_gives_a_result_or_one_error_line(cli, capsys, places, command, data):
    run, texts = COMMANDS[command]
    options = _options(command)
    chosen = data.draw(st.lists(st.sampled_from(options), min_size=1, max_size=4, unique=True))
    args = []
    for name, takes_value in chosen:
        args += [name, data.draw(VALUES)] if takes_value else [name]
    if command == "generate" and "--max-new-tokens" not in args:
        args += ["--max-new-tokens", "5"]
    try:
        result = cli(command, places[run], *texts, *args)
    except SystemExit as stop:  # argparse's own refusal (a value it cannot parse): usage + one error line
        assert stop.code == 2, args
        err = capsys.readouterr().err  # (and the buffer emptied for the next example)
        # a value that looks like an option ("-inf") after an option whose value may be left out (--baseline
        # [NAME]) is not taken as its value: argparse names it as an argument it did not expect
        assert "error: argument" in err or re.search(r"error: unrecognized arguments: -\S", err), err
        return
    _one_result_or_one_error(result, args)


@pytest.mark.parametrize("kind, run", INSPECT)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_inspecting_with_any_option_values_gives_a_result_or_one_error_line(
    cli, capsys, places, tmp_path_factory, kind, run, data
):
    """``tlite inspect KIND RUN`` with generated values for its options (inputs included: any text,
    any head, block or position)."""
    options = [o for o in _options("inspect") if o[0] not in ("--out", "--windows", "--dim", "--length")]
    options += [("--text", True), ("--tgt", True), ("--src", True)]
    chosen = data.draw(st.lists(st.sampled_from(options), min_size=1, max_size=3, unique=True))
    args = []
    for name, takes_value in chosen:
        args += [name, data.draw(VALUES)] if takes_value else [name]
    out = tmp_path_factory.mktemp("inspect")
    try:
        result = cli("inspect", kind, places[run], *args, "--out", out)
    except SystemExit as stop:
        assert stop.code == 2, args
        assert "error: argument" in capsys.readouterr().err
        return
    _one_result_or_one_error(result, args)


def _one_result_or_one_error(result, args) -> None:  # noqa: ANN001
    assert "internal error" not in result.err and "Traceback" not in result.err, (args, result.err)
    if result.code == 1:  # one error line (after any warnings about input that was used as it came)
        errors = [line for line in result.lines if not line.startswith("tlite: warning: ")]
        assert len(errors) == 1 and errors[0].startswith("tlite: error: "), (args, result.err)
    else:
        assert result.code in (0, 2, 130, 143), (args, result.code, result.err)


TRAIN_SKIP = FILES | {"--config", "--resume", "--corpus", "--dist-timeout", "--max-steps", "--help"}


def _train_options(family: str) -> list[tuple[str, bool]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    train = next(a for a in sub.choices["train"]._actions if isinstance(a, argparse._SubParsersAction))
    skip = TRAIN_SKIP | {"--train", "--val", "--train-src", "--train-tgt", "--val-src", "--val-tgt", "--init-from"}
    return [
        (action.option_strings[-1], action.nargs != 0)
        for action in train.choices[family]._actions
        if action.option_strings and action.option_strings[-1] not in skip
    ]


def _train_base(family: str, files, out) -> list:  # noqa: ANN001
    if family == "generator":
        return ["train", "generator", "--text", files / "text.txt", *TINY_GPT, "--out", out]
    if family == "classifier":
        return [
            "train",
            "classifier",
            "--train",
            files / "train.jsonl",
            "--val",
            files / "dev.jsonl",
            *TINY_CLS,
            "--out",
            out,
        ]
    pairs = ["--train-src", files / "train.src", "--train-tgt", files / "train.tgt"]
    return [
        "train",
        "seq2seq",
        *pairs,
        "--val-src",
        files / "val.src",
        "--val-tgt",
        files / "val.tgt",
        *TINY_S2S,
        "--out",
        out,
    ]


@pytest.mark.parametrize("family, examples", [("generator", 25), ("classifier", 10), ("seq2seq", 6)])
def test_training_with_any_option_values_gives_a_run_or_one_error_line(
    cli, capsys, files, tmp_path_factory, family, examples
):
    """``tlite train FAMILY`` (a tiny model, two steps at most) with generated training and data settings."""

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(data=st.data())
    def check(data) -> None:  # noqa: ANN001
        _train_with(cli, capsys, files, tmp_path_factory, family, data)

    check()


def _train_with(cli, capsys, files, tmp_path_factory, family, data) -> None:  # noqa: ANN001
    chosen = data.draw(st.lists(st.sampled_from(_train_options(family)), min_size=1, max_size=3, unique=True))
    args = []
    for name, takes_value in chosen:
        args += [name, data.draw(VALUES)] if takes_value else [name]
    out = tmp_path_factory.mktemp("fuzz") / "run"
    base = _train_base(family, files, out)
    try:
        result = cli(*base, *args, "--max-steps", "2")
    except SystemExit as stop:
        assert stop.code == 2, args
        assert "error: argument" in capsys.readouterr().err
        return
    _one_result_or_one_error(result, args)


@pytest.mark.parametrize("option", ["--batch-size", "--accumulate", "--eval-every", "--warmup-steps"])
def test_a_count_beyond_32_bits_is_refused_by_name(cli, files, tmp_path, option):
    result = cli(
        "train", "generator", "--text", files / "text.txt", *TINY_GPT, option, "9" * 30, "--out", tmp_path / "r"
    )
    name = option[2:].replace("-", "_")
    low = 1 if name in ("batch_size", "accumulate") else 0
    assert result.code == 1
    assert result.lines == [f"tlite: error: {name} must be an integer in [{low}, 2147483647], got {'9' * 30}"]
    assert not (tmp_path / "r").exists()


def test_running_out_of_memory_is_an_error_naming_what_to_lower(cli, places, monkeypatch):
    from transformers_lite import pipeline

    def too_big(*args, **kw):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory: 52 GB")

    monkeypatch.setattr(pipeline.Run, "classify", too_big)
    result = cli("classify", places["cls"], "great box")
    assert result.code == 1 and len(result.lines) == 1
    assert result.lines[0].startswith("tlite: error: out of memory (") and "lower --batch-size" in result.lines[0]

import json
import os

import pytest

from .helpers import TINY_GPT, tlite

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" * 30


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    text = tmp / "t.txt"
    text.write_text(TEXT)
    out = tmp / "run"
    result = tlite(
        "train", "generator", "--text", text, *TINY_GPT, "--max-steps", "6", "--eval-every", "3", "--out", out
    )
    assert result.returncode == 0, result.stderr
    return out


def test_every_subcommand_has_help_with_an_example_and_real_defaults():
    from transformers_lite.cli.main import build_parser

    for cmd in (
        ["train", "generator"],
        ["train", "classifier"],
        ["train", "seq2seq"],
        ["summary"],
        ["data"],
        ["evaluate"],
        ["generate"],
        ["classify"],
        ["translate"],
        ["inspect"],
        ["baseline"],
        ["backprop"],
    ):
        parser = build_parser()
        for word in cmd:  # walk down to the subcommand's own parser
            parser = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices[word]
        text = parser.format_help()
        assert "example" in text.lower(), cmd
        assert "default: None" not in text and "default: none" not in text, (cmd, text)
        examples = text[text.rindex("example") :].splitlines()[1:]
        assert examples and all(line.strip().startswith("tlite ") for line in examples if line.strip()), (cmd, text)
        if cmd[0] == "train":  # the family's description heads its help, above the options
            assert text.index("Defaults shown") < text.index("options:"), text
    result = tlite("train", "classifier", "--help")
    assert result.returncode == 0 and "--lr LR" in result.stdout and "(default: 0.004)" in result.stdout


def test_train_writes_a_run_and_logs_one_line_per_evaluation(run_dir):
    history = json.loads((run_dir / "history.json").read_text())
    assert [h["step"] for h in history] == [3, 6]


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "generator", "--preset", "gpt9"], "unknown preset 'gpt9'"),
        (["train", "generator", "--set", "layers=3"], "unknown generator config key(s): layers"),
        (["train", "generator", "--set", "n_blocks=three"], "n_blocks='three' is not a valid int"),
        (
            ["train", "generator", "--preset", "seed-classifier"],
            "is for a classifier, not a generator",
        ),
        (["train", "generator", "--resume", "/nonexistent/run"], "not a run directory"),
    ],
)
def test_bad_input_is_one_line(args, message):
    result = tlite(*args)
    assert result.returncode == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_resume_rejects_another_task_and_unwritable_out(run_dir, tmp_path):
    result = tlite("train", "classifier", "--resume", run_dir)
    assert result.returncode == 1 and "that run is for a generator, not a classifier" in result.stderr
    if os.geteuid() != 0:  # root can write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        result = tlite("train", "generator", "--text", run_dir / "tokenizer.json", "--out", locked / "x")
        assert result.returncode == 1 and "permission denied" in result.stderr
    result = tlite("train", "generator", "--text", run_dir / "tokenizer.json", *TINY_GPT, "--out", run_dir)
    assert result.returncode == 1 and "already holds a run" in result.stderr
    result = tlite(
        "train", "generator", "--text", run_dir / "tokenizer.json", *TINY_GPT, "--out", run_dir / "config.json" / "sub"
    )  # a file in the way
    assert result.returncode == 1 and "cannot create the output directory" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

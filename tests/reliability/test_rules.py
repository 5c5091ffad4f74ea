"""The rules of docs/reliability.md ("Rules") as a user meets them through ``tlite``: outputs never
replace what is not a regular file, one output per input line, no word moves between texts, numbers
that would mean something else are refused by name."""

import io
import json
import os
import stat
import sys

import pytest

from .test_bad_inputs import C, G, fill


@pytest.fixture
def places(files, runs, tmp_path):
    return {"gen": runs / "generator", "cls": runs / "classifier", "s2s": runs / "seq2seq", "tmp": tmp_path}


def test_classify_output_through_a_link_onto_a_device_and_onto_a_folder(cli, places, tmp_path):
    (tmp_path / "real.txt").write_text("stale\n" * 5)
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    result = cli("classify", places["cls"], "great box", "awful box", "--output", tmp_path / "link.txt")
    assert result.code == 0, result.err
    assert (tmp_path / "link.txt").is_symlink()  # still the link, and its target holds the two results
    assert len((tmp_path / "real.txt").read_text().splitlines()) == 2
    assert cli("classify", places["cls"], "great box", "--output", os.devnull).code == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)  # the device, not a new regular file
    (tmp_path / "folder").mkdir()
    result = cli("classify", places["cls"], "great box", "--output", tmp_path / "folder")
    assert result.code == 1 and result.lines == [
        f"tlite: error: cannot write {tmp_path / 'folder'}: it is a directory; give a file name"
    ]


def test_classify_answers_every_line_of_standard_input_once(cli, places, monkeypatch, tmp_path):
    lines = ["great\rbox", "awful\u2028box", "okay\x85box\x0bbox\x0c", "good\x00box"]
    data = "\r\n".join(lines).encode() + b"\r\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    result = cli("classify", places["cls"], "--input", "-", "--output", tmp_path / "out.txt")
    assert result.code == 0, result.err
    assert len((tmp_path / "out.txt").read_text().split("\n")) == len(lines) + 1  # one line each, then the end


def test_a_json_text_that_is_a_number_names_the_line(cli, places, tmp_path):
    (tmp_path / "in.jsonl").write_text('{"text": "good"}\n{"text": 5}\n')
    result = cli("classify", places["cls"], "--input", tmp_path / "in.jsonl")
    assert result.code == 1 and "in.jsonl:2: the 'text' field holds a number (5), not a string" in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "{gen}", "--temperature", "inf"], "temperature must be a finite number >= 0, got inf"),
        (["generate", "{gen}", "--temperature", "nan"], "temperature must be a finite number >= 0, got nan"),
        (["generate", "{gen}", "--seed", "-5"], "seed must be an integer in [0, 4294967295], got -5"),
        (["translate", "{s2s}", "alpha", "--length-penalty", "nan"], "length_penalty must be a number in [-10, 10]"),
        (["translate", "{s2s}", "alpha", "--length-penalty=-inf"], "length_penalty must be a number in [-10, 10]"),
    ],
)
def test_numbers_that_would_mean_something_else_are_refused(cli, places, args, message):
    result = cli(*fill(args, places))
    assert result.code == 1 and len(result.lines) == 1 and message in result.lines[0], result.err


def test_a_tiny_temperature_prints_the_greedy_text(cli, places):
    args = ["generate", places["gen"], "--prompt", "Sp", "--max-new-tokens", "30"]
    greedy = cli(*args, "--temperature", "0")
    tiny = cli(*args, "--temperature", "1e-300")
    assert greedy.code == tiny.code == 0 and tiny.out == greedy.out


def test_a_seed_too_large_is_refused_before_a_run_folder_exists(cli, files, tmp_path):
    out = tmp_path / "run"
    paths = {"text": files / "text.txt", "train": files / "train.jsonl", "dev": files / "dev.jsonl"}
    result = cli(*fill(G, paths), "--seed", "1000000000000000", "--out", out)
    assert result.code == 1 and "seed must be an integer in [0, 4294967295], got 1000000000000000" in result.err
    assert not out.exists()
    assert cli(*fill(G, paths), "--seed", str(2**32 - 1), "--out", out).code == 0  # the largest seed trains


def test_reviews_holding_nul_characters_train(cli, files, tmp_path):
    rows = [json.loads(line) for line in (files / "train.jsonl").read_text().splitlines()]
    for i, row in enumerate(rows):
        row["review_body"] = row["review_body"].replace(" ", "\x00" if i % 3 == 0 else " ")
    (tmp_path / "nul.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    paths = {"train": tmp_path / "nul.jsonl", "dev": files / "dev.jsonl"}
    result = cli(*fill(C, paths), "--out", tmp_path / "run")
    assert result.code == 0, result.err

"""``tlite baseline`` on pairs and on text: the floor of each kind of data, read as training reads it."""

import json

import pytest

from transformers_lite.cli.main import main

from ..tasks.test_seq2seq_task import write_reverse_task


def test_pairs_get_copying_and_the_translation_memory(tmp_path, capsys):
    pytest.importorskip("sklearn")
    src, tgt = write_reverse_task(tmp_path, 100, 0)
    table = tmp_path / "pairs.tsv"
    table.write_text(
        "de\ten\n"
        + "".join(f"{a}\t{b}\n" for a, b in zip(src.read_text().split("\n"), tgt.read_text().split("\n")) if a)
    )
    assert main(["baseline", "--train-src", str(table), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["baseline"] for r in rows] == ["copy", "memory"]
    assert all(r["n"] == 5 and r["train_pairs"] == 95 for r in rows)  # the translator's 5 % held out
    assert (
        main(
            [
                "baseline",
                "memory",
                "--train-src",
                str(src),
                "--train-tgt",
                str(tgt),
                "--val-src",
                str(src),
                "--val-tgt",
                str(tgt),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "100 training and 100 validation pairs" in out and "memory: BLEU 100.00 | chrF 100.00" in out


def test_text_gets_the_compressor_and_the_character_model(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("the cat sat on the mat and the dog sat on the log\n" * 40)
    assert main(["baseline", "--text", str(text), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["baseline"] for r in rows] == ["xz", "char-ngram"]
    n = len(text.read_text())
    assert all(r["n_chars"] == n // 10 and r["train_chars"] == n - n // 10 for r in rows)  # the last tenth held out
    assert rows[1]["bits_per_char"] < 0.5  # a text that repeats itself: nearly free given its training part
    assert main(["baseline", "tfidf", "--text", str(text)]) == 1
    assert "unknown baseline 'tfidf' for a text; choose from xz, char-ngram" in capsys.readouterr().err

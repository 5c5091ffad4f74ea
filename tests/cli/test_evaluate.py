"""``tlite evaluate`` scores a run on the user's own test data, in the run's own columns, with the strong
baseline of its kind of data beside it."""

import json

import pytest

from ..helpers import ONE_THREAD, TINY_GPT, sets, tlite
from ..tasks.test_seq2seq_task import write_reverse_task

TINY_SEQ2SEQ = sets("dim=16", "n_heads=2", "dim_hidden=32", "n_encoder_blocks=1", "n_decoder_blocks=1", "max_length=16")


def pairs_table(path, src, tgt):
    lines = ["de\ten", *(f"{a}\t{b}" for a, b in zip(src.read_text().splitlines(), tgt.read_text().splitlines()))]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def translator(tmp_path_factory):
    """A translator trained a few steps on a table of pairs with columns ``de`` and ``en``, and a test table."""
    tmp = tmp_path_factory.mktemp("translator")
    train = pairs_table(tmp / "train.tsv", *write_reverse_task(tmp, 200, 0))
    test_src, test_tgt = write_reverse_task(tmp, 12, 1)
    run = tmp / "run"
    done = tlite(
        "train", "seq2seq", "--train-src", train, "--src-column", "de", "--tgt-column", "en", "--tokenizer", "word",
        *TINY_SEQ2SEQ, "--max-tokens", "256", "--max-steps", "3", "--bleu-sentences", "0", "--out", run, env=ONE_THREAD,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return run, pairs_table(tmp / "test.tsv", test_src, test_tgt), (test_src, test_tgt)


def scores(*args):
    done = tlite("evaluate", *args, "--json", env=ONE_THREAD)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_translator_is_scored_on_a_table_in_its_own_columns(translator):
    run, table, (src, ref) = translator
    from_table, from_lines = scores(run, "--data", table), scores(run, "--src", src, "--ref", ref)
    assert from_table["n"] == from_lines["n"] == 12
    assert (from_table["bleu"], from_table["chrf"]) == (from_lines["bleu"], from_lines["chrf"])


def test_a_table_given_as_line_files_is_refused_with_the_command_that_reads_it(translator):
    run, table, _ = translator
    done = tlite("evaluate", run, "--src", table, "--ref", table, env=ONE_THREAD)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{table} is a table, not one sentence per line: score a table of pairs with --data {table}" in done.stderr


def test_the_translation_memory_is_scored_beside_a_translator(translator):
    run, table, _ = translator
    pytest.importorskip("sklearn")
    result = scores(run, "--data", table, "--baseline")
    (memory,) = result["baselines"]
    assert memory["baseline"] == "memory" and memory["n"] == 12 and memory["train_pairs"] == 190  # less 5 % held out
    assert 0 <= memory["bleu"] <= 100 and memory["seconds"] >= 0
    printed = tlite("evaluate", run, "--data", table, "--baseline", env=ONE_THREAD).stdout
    assert "\nbaseline memory (a translation memory" in printed and "given the run's 190 training pairs" in printed


def test_a_generator_leaves_out_what_exclude_matches_and_scores_the_text_baselines(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "data").mkdir(parents=True)
    (corpus / "a.py").write_text("def add(a, b):\n    return a + b\n" * 60)
    (corpus / "b.py").write_text("def sub(a, b):\n    return a - b\n" * 60)
    (corpus / "data" / "big.json").write_text('{"x": [1, 2, 3]}\n' * 500)  # a third of the corpus, or more
    run = tmp_path / "run"
    done = tlite(
        "train", "generator", "--text", corpus, "--exclude", "data/*", *TINY_GPT, "--max-steps", "2", "--out", run,
        env=ONE_THREAD,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "read 2 files" in done.stdout and "left out 1 files matching --exclude (big.json)" in done.stdout
    data = json.loads((run / "hyperparameters.json").read_text())["data"]
    assert data["exclude"] == "data/*" and data["files"] == 2
    result = scores(run, "--baseline")  # the run's own validation split, the excluded file still left out
    assert [b["baseline"] for b in result["baselines"]] == ["xz", "char-ngram"]
    assert all(b["n_chars"] == result["n_chars"] and b["bits_per_char"] >= 0 for b in result["baselines"])
    both = len((corpus / "a.py").read_text()) + len((corpus / "b.py").read_text())
    assert all(b["train_chars"] < both for b in result["baselines"])  # given the two files' text, not the JSON
    other = scores(run, "--text", corpus, "--exclude", "*.json")
    assert other["n_chars"] < scores(run, "--text", corpus)["n_chars"]


def test_a_baseline_of_another_kind_of_data_is_named(translator):
    run, _, _ = translator
    done = tlite("evaluate", run, "--baseline", "xz", env=ONE_THREAD)
    assert done.returncode != 0 and "--baseline xz: the baselines of a seq2seq run are copy, memory" in done.stderr

import json

from transformers_lite.evaluation.translation import corpus_scores

from .helpers import tlite
from .tasks.test_seq2seq_task import write_reverse_task


def test_train_translate_evaluate_and_inspect_seq2seq(tmp_path):
    train = write_reverse_task(tmp_path, 300, 0)
    val = write_reverse_task(tmp_path, 20, 1)
    run = tmp_path / "run"
    result = tlite(
        "train",
        "seq2seq",
        "--train-src",
        train[0],
        "--train-tgt",
        train[1],
        "--val-src",
        val[0],
        "--val-tgt",
        val[1],
        "--tokenizer",
        "word",
        "--set",
        "dim=32",
        "--set",
        "n_heads=2",
        "--set",
        "dim_hidden=64",
        "--set",
        "n_encoder_blocks=1",
        "--set",
        "n_decoder_blocks=1",
        "--set",
        "max_length=16",
        "--max-tokens",
        "256",
        "--max-steps",
        "20",
        "--bleu-sentences",
        "10",
        "--out",
        run,
    )
    assert result.returncode == 0, result.stderr
    assert "val_bleu" in json.loads((run / "history.json").read_text())[-1]
    for name in ("src_tokenizer.json", "tgt_tokenizer.json", "model.safetensors"):
        assert (run / name).is_file()
    out = tlite("translate", run, "alpha beta gamma", "delta", "--beam", "3", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["task"] == "seq2seq" and [t["source"] for t in data["translations"]] == ["alpha beta gamma", "delta"]
    out = tlite("evaluate", run, "--src", val[0], "--ref", val[1], "--json")
    assert out.returncode == 0, out.stderr
    scores = json.loads(out.stdout)
    assert scores["task"] == "seq2seq" and scores["n"] == 20 and 0 <= scores["bleu"] <= 100 and "chrf" in scores
    # beside it, no model: each source sentence copied as its translation (the reversed words share unigrams)
    copied = corpus_scores(val[0].read_text().splitlines(), val[1].read_text().splitlines())
    assert (scores["copy_source_bleu"], scores["copy_source_chrf"]) == (copied["bleu"], copied["chrf"])
    assert 0 < copied["bleu"] < 100
    out = tlite("inspect", "attention", run, "--src", "alpha beta", "--tgt", "beta alpha")
    assert out.returncode == 0, out.stderr
    assert (run / "plots" / "cross_attention_block0_head0.png").read_bytes()[:4] == b"\x89PNG"


def test_translating_a_table_of_pairs_reads_its_source_column(tmp_path):
    """A pairs TSV given to translate --input: the source column, never the longer target column."""
    from types import SimpleNamespace

    from transformers_lite.cli.common import inputs

    (tmp_path / "pairs.tsv").write_text("src\ttgt\nein hund\ta dog that is much longer than its source\n")
    args = SimpleNamespace(texts=[], input=str(tmp_path / "pairs.tsv"), json=False)
    assert inputs(args, ("text", "source", "src")) == (["ein hund"], False)

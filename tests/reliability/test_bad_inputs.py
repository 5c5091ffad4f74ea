"""Bad command lines and bad input files: each gets one line, ``tlite: error: ...``, and exit 1 (or,
when the input is usable but changed, one ``tlite: warning: ...`` line and exit 0). The case ids are
the rows of docs/reliability.md."""

import gzip
import json
import re
import shutil

import pytest
import torch

from transformers_lite.cli.main import main

from .conftest import TINY_CLS, TINY_GPT, TINY_S2S, write_reviews

G = ["train", "generator", "--text", "{text}", *TINY_GPT, "--max-steps", "2"]
C = ["train", "classifier", "--train", "{train}", "--val", "{dev}", *TINY_CLS, "--max-steps", "2"]
S = [
    "train",
    "seq2seq",
    "--train-src",
    "{tsrc}",
    "--train-tgt",
    "{ttgt}",
    "--val-src",
    "{vsrc}",
    "--val-tgt",
    "{vtgt}",
    *TINY_S2S,
    "--max-steps",
    "2",
]
# id -> (command line, message in the one error line)
ERRORS = {
    "max-steps-0": (G + ["--max-steps", "0"], "max_steps must be an integer >= 1"),
    "epochs-negative": (G + ["--epochs", "-1"], "epochs must be a finite number > 0"),
    "min-lr-ratio-negative": (G + ["--min-lr-ratio", "-2"], "min_lr_ratio must be a number in [0, 1]"),
    "patience-0": (G + ["--patience", "0"], "patience must be an integer >= 1"),
    "batch-size-0-generator": (G + ["--batch-size", "0"], "batch_size must be an integer >= 1"),
    "batch-size-0-classifier": (C + ["--batch-size", "0"], "batch_size must be an integer >= 1"),
    "members-0": (C + ["--set", "members=0"], "members must be an integer >= 1"),
    "bigram-buckets-negative": (C + ["--set", "bigram_buckets=-5"], "bigram_buckets must be an integer >= 0"),
    "n-blocks-negative": (G + ["--set", "n_blocks=-2"], "n_blocks must be an integer >= 1"),
    "warmup-negative": (G + ["--warmup-steps", "-5"], "warmup_steps must be an integer >= 0"),
    "grad-clip-negative": (G + ["--grad-clip", "-1"], "grad_clip must be a finite number >= 0"),
    "weight-decay-negative": (G + ["--weight-decay", "-0.1"], "weight_decay must be a finite number >= 0"),
    "stop-at-negative": (G + ["--stop-at", "-3"], "stop_at must be an integer >= 1"),
    "lr-zero": (G + ["--lr", "0"], "lr must be a finite number > 0"),
    "lr-nan": (G + ["--lr", "nan"], "lr must be a finite number > 0"),
    "max-minutes-zero": (G + ["--max-minutes", "0"], "max_minutes must be a finite number > 0"),
    "accumulate-zero": (G + ["--accumulate", "0"], "accumulate must be an integer >= 1"),
    "eval-every-negative": (G + ["--eval-every", "-1"], "eval_every must be an integer >= 0"),
    "checkpoint-every-zero": (G + ["--checkpoint-every", "0"], "checkpoint_every must be an integer >= 1"),
    "beta2-one": (G + ["--beta2", "1"], "beta2 must be a number in [0, 1)"),
    "val-fraction-too-big": (G + ["--val-fraction", "1.5"], "val_fraction must be a number in (0, 1)"),
    "val-fraction-zero-generator": (G + ["--val-fraction", "0"], "val_fraction must be a number in (0, 1)"),
    "label-smoothing-2": (C + ["--label-smoothing", "2"], "label_smoothing must be a number in [0, 1)"),
    "eval-tokens-0": (G + ["--eval-tokens", "0"], "eval_tokens must be an integer >= 1"),
    "max-length-0": (G + ["--set", "max_length=0"], "max_length must be an integer >= 1"),
    "dim-not-divisible": (G + ["--set", "n_heads=3"], "dim=16 is not divisible by n_heads=3"),
    "dropout-too-big": (G + ["--set", "dropout=1.5"], "dropout must be a number in [0, 1)"),
    "unknown-model-key": (G + ["--set", "layers=3"], "unknown generator config key(s): layers"),
    "renamed-model-key": (G + ["--set", "context=128"], "context (renamed max_length)"),
    "bad-value-type": (G + ["--set", "n_blocks=three"], "n_blocks='three' is not a valid int"),
    "override-without-equals": (G + ["--set", "n_blocks"], "is not of the form key=value"),
    "unknown-preset": (G + ["--preset", "gpt9"], "unknown preset 'gpt9'"),
    "preset-of-another-family": (
        G + ["--preset", "post-classifier"],
        "is for a classifier, not a generator",
    ),
    "preset-and-config": (G + ["--preset", "post-gpt", "--config", "{tmp}/c.json"], "either --preset or --config"),
    "missing-config-file": (G + ["--config", "{tmp}/nope.json"], "config file not found"),
    "broken-config-file": (G + ["--config", "{broken}"], "not valid JSON"),
    "negative-random-seed": (G + ["--seed", "-1"], "seed must be an integer in [0, 4294967295]"),
    "unknown-device": (G + ["--device", "tpu"], "unknown device 'tpu'"),
    "run-config-of-another-task": (
        ["train", "classifier", "--config", "{runconfig}"],
        "is for a generator, not a classifier",
    ),
    "resume-with-out": (["train", "generator", "--resume", "{gen}", "--out", "{tmp}/x"], "drop --config/--out"),
    "resume-not-a-run": (["train", "generator", "--resume", "{tmp}"], "not a run directory"),
    "resume-another-task": (
        ["train", "classifier", "--resume", "{gen}"],
        "that run is for a generator, not a classifier",
    ),
    "resume-changes-batch-size": (
        ["train", "generator", "--resume", "{gen}", "--batch-size", "8"],
        "changes batch_size (run 4, command 8)",
    ),
    "resume-changes-text": (["train", "generator", "--resume", "{gen}", "--text", "{other}"], "changes text"),
    "resume-changes-model": (
        ["train", "generator", "--resume", "{gen}", "--set", "n_blocks=2"],
        "changes n_blocks (run 1, command 2)",
    ),
    "missing-text": (["train", "generator", "--text", "{tmp}/nope.txt"], "file not found"),
    "text-is-an-empty-folder": (["train", "generator", "--text", "{emptydir}"], "no file found"),
    "empty-text-file": (["train", "generator", "--text", "{empty}"], "the file is empty"),
    "text-not-utf8": (["train", "generator", "--text", "{latin1}"], "bytes that are not UTF-8"),
    "corrupt-gzip": (["train", "generator", "--text", "{badgz}"], "cannot be read"),
    "text-too-short-for-validation": (G + ["--text", "{short}"], "too small; raise --val-fraction"),
    "text-too-short-for-context": (G + ["--text", "{short30}", "--val-fraction", "0.5"], "too few for a context"),
    "classifier-without-train": (["train", "classifier"], "give the training records with --train"),
    "reviews-missing-field": (C + ["--train", "{nofield}"], "which column holds the labels?"),
    "reviews-stars-out-of-range": (C + ["--train", "{stars6}"], "stars value 6 is outside 1..5"),
    "reviews-invalid-json": (C + ["--train", "{badjson}"], "bad.jsonl:2: invalid JSON"),
    "reviews-not-objects": (C + ["--train", "{notobj}"], "a list, not a record; give one JSON object per record"),
    "reviews-empty-text": (C + ["--train", "{emptyreview}"], "emptyreview.jsonl:2: empty 'review_body' text"),
    "csv-missing-column": (C + ["--train", "{csvnocol}"], "which column holds the text? columns are ['id', 'score']"),
    "binary-task-only-three-stars": (
        C + ["--train", "{threes}", "--labels", "2"],
        "no training records for the sentiment",
    ),
    "classifier-empty-validation": (
        ["train", "classifier", "--train", "{train}", "--val-fraction", "0", *TINY_CLS, "--max-steps", "2"],
        "validation split",
    ),
    "pairs-of-different-lengths": (S + ["--val-tgt", "{ttgt}"], "parallel files differ in length"),
    "pairs-all-too-long": (S + ["--set", "max_length=2"], "pair fits max_length=2"),
    "bpe-vocabulary-too-small": (S + ["--tokenizer", "bpe", "--vocab-size", "2"], "vocab_size must be an integer >= 5"),
    "top-k-negative": (["generate", "{gen}", "--top-k", "-3"], "top_k must be an integer >= 1"),
    "top-p-zero": (["generate", "{gen}", "--top-p", "0"], "top_p must be a number in (0, 1]"),
    "top-p-above-one": (["generate", "{gen}", "--top-p", "1.5"], "top_p must be a number in (0, 1]"),
    "temperature-negative": (["generate", "{gen}", "--temperature", "-1"], "temperature must be a finite number >= 0"),
    "max-new-tokens-negative": (["generate", "{gen}", "--max-new-tokens", "-1"], "--max-new-tokens must be >= 0"),
    "stride-zero": (["generate", "{gen}", "--stride", "0"], "stride must be in 1..16"),
    "empty-prompt": (["generate", "{gen}", "--prompt", ""], "the prompt is empty"),
    "generate-on-a-classifier": (["generate", "{cls}"], "holds a classifier model, which cannot generate"),
    "generate-not-a-run": (["generate", "{tmp}/nowhere"], "is not a run directory"),
    "beam-zero": (["translate", "{s2s}", "alpha", "--beam", "0"], "beam must be an integer in [1, 1000]"),
    "classify-empty-text": (["classify", "{cls}", "good", ""], "text 2 is empty"),
    "translate-empty-text": (["translate", "{s2s}", " "], "text 1 is empty"),
    "evaluate-recorded-data-gone": (["evaluate", "{gone}"], "file {gonefile} is gone; pass --text FILE"),
    "evaluate-generator-with-data": (["evaluate", "{gen}", "--data", "{dev}"], "--data is for classifier runs"),
    "evaluate-seq2seq-without-references": (["evaluate", "{s2s}", "--src", "{vsrc}"], "give both --src FILE and --ref"),
    "classify-texts-and-input": (["classify", "{cls}", "good", "--input", "{dev}"], "not both"),
    "classify-nothing": (["classify", "{cls}"], "give at least one text, or --input FILE"),
    "classify-input-with-an-empty-line": (["classify", "{cls}", "--input", "{holey}"], "holey.txt:2: empty input"),
    "classify-input-bad-json-line": (["classify", "{cls}", "--input", "{badlines}"], "bad.jsonl:2: invalid JSON"),
    "classify-output-is-the-input": (
        ["classify", "{cls}", "--input", "{holey}", "--output", "{holey}"],
        "is the --input file: it would be written over",
    ),
    "evaluate-table-without-the-runs-label-column": (
        ["evaluate", "{cls}", "--data", "{nofield}"],
        "which column holds the labels? columns are ['review_body']; name that column 'stars'",
    ),
    "data-lengths-table-without-texts": (
        ["data", "lengths", "{csvnocol}"],
        "which column holds the text? columns are ['id', 'score']; name that column 'text'",
    ),
    "classify-input-table-without-texts": (
        ["classify", "{cls}", "--input", "{csvnocol}"],
        "name that column 'review_body'",
    ),
    "label-map-value-no-label-has": (
        C + ["--label-map", "1=neg,2=neg,4=pos,6=pos"],
        "'6' matches no label of {train}: column 'stars'",
    ),
    "plain-tsv-with-a-tab-in-a-text": (C + ["--train", "{tabtsv}"], "replace the tabs inside a text by spaces"),
    "sinusoid-too-long": (["inspect", "sinusoid", "--length", "100000000"], "--length 1..100,000"),
    "translate-input-missing-field": (
        ["translate", "{s2s}", "--input", "{nofieldlines}"],
        "no 'text' or 'source' or 'src' field",
    ),
    "inspect-a-classifier": (["inspect", "all", "{cls}"], "inspect draws generator and translator runs"),
    "inspect-block-out-of-range": (["inspect", "attention", "{gen}", "--block", "5"], "block 5 / head 0 out of range"),
    "inspect-empty-prompt": (["inspect", "next-token", "{gen}", "--prompt", ""], "the prompt is empty"),
    "inspect-empty-text": (["inspect", "attention", "{gen}", "--text", ""], "the text for the attention maps is empty"),
    "summary-unknown-preset": (["summary", "nope"], "unknown preset 'nope'"),
    "download-marc": (["data", "download", "amazon_reviews_multi_en"], "MARC was withdrawn"),
    "baseline-setting-no-baseline-asked-takes": (
        ["baseline", "majority", "--train", "{train}", "--val", "{dev}", "--ngrams", "0"],
        "--ngrams is a setting of the tfidf baseline, not of the majority asked, so it would change nothing",
    ),
    "beam-too-large": (["translate", "{s2s}", "alpha", "--beam", "100000"], "beam must be an integer in [1, 1000]"),
    "label-nan": (C + ["--train", "{nanlabel}"], "nan.jsonl:2: the 'stars' value is NaN, which is no value"),
    "text-an-empty-zip": (["train", "generator", "--text", "{emptyzip}"], "an empty zip archive (no file in it)"),
    "text-zstd-compressed": (["train", "generator", "--text", "{zstd}"], "zstd-compressed, which cannot be read"),
    "table-json-holding-a-number": (C + ["--train", "{json42}"], "42.json: a JSON file holds a number"),
    "resume-a-trained-run-without-checkpoints": (
        ["train", "generator", "--resume", "{nockpt}"],
        "checkpoint/LATEST (a complete checkpoint) is missing though the run has trained",
    ),
    "pair-one-column-both-sides": (
        ["train", "seq2seq", "--train-src", "{pairtable}", "--src-column", "de", "--tgt-column", "de", *TINY_S2S],
        "the source and the target are both 'de'",
    ),
    "ordinal-of-labels-without-order": (
        ["baseline", "majority", "--train", "{topics}", "--ordinal"],
        "(books, music, toys) are names with no order",
    ),
    "backward-position-cut-off-by-the-context": (
        ["inspect", "backward", "{gen}", "--text", "Before we proceed any further", "--position", "20"],
        "the text has 29 tokens and the model reads only its last 16 (its context)",
    ),
}
# id -> (command line, text in the one warning line); the command succeeds
WARNINGS = {
    "prompt-with-unknown-characters": (
        ["generate", "{gen}", "--prompt", "Zebra", "--max-new-tokens", "3"],
        "characters the model never saw",
    ),
    "classify-a-long-text": (["classify", "{cls}", "good " * 40], "longer than the 16 words the model reads"),
    "translate-a-long-text": (
        ["translate", "{s2s}", "alpha beta gamma delta. " * 12],
        "translated sentence by sentence",
    ),
    "class-missing-from-validation": (C + ["--val", "{no5}", "--out", "{tmp}/missing5"], "have no example of 5 stars"),
    "translation-pair-with-an-empty-side": (
        S + ["--train-src", "{holesrc}", "--train-tgt", "{holetgt}", "--out", "{tmp}/holes"],
        "dropped 1 training pairs with an empty source",
    ),
    "label-map-value-no-record-has": (
        C + ["--label-map", "1=neg,2=neg,3=,4=pos,5=pos,6=pos"],
        "'6' matches no label of",
    ),
    "translation-pairs-too-long": (S + ["--set", "max_length=5", "--out", "{tmp}/long"], "training pairs longer than"),
    "corpus-pattern-naming-a-file-twice": (
        G + ["--text", "{twice}/**/**/*.txt", "--out", "{tmp}/twice-run"],
        "names 1 file(s) more than once",
    ),
    "evaluate-on-characters-never-seen": (
        ["evaluate", "{gen}", "--text", "{unseen}"],
        "has characters the model never saw in training ('\\xad' 'Ä'",
    ),
}


@pytest.fixture(scope="module")
def paths(files, runs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    (tmp / "c.json").write_text(json.dumps({"family": "generator"}))
    (tmp / "broken.json").write_text('{"family": "generator", "dim"')
    (tmp / "empty.txt").write_text("  \n")
    (tmp / "latin1.txt").write_bytes("Caf\xe9 au lait\n".encode("latin-1") * 20)
    (tmp / "bad.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    (tmp / "short.txt").write_text("abcdefghijkl")
    (tmp / "short30.txt").write_text("abcdefghij" * 3)
    (tmp / "other.txt").write_text("Another text entirely.\n" * 50)
    (tmp / "nofield.jsonl").write_text('{"review_body": "ok"}\n')
    (tmp / "stars6.jsonl").write_text('{"review_body": "ok", "stars": "6"}\n')
    (tmp / "bad.jsonl").write_text('{"review_body": "ok", "stars": 1}\n{not json\n')
    (tmp / "notobj.jsonl").write_text("[1, 2]\n")
    (tmp / "emptyreview.jsonl").write_text('{"review_body": "ok", "stars": 1}\n{"review_body": "  ", "stars": 2}\n')
    (tmp / "nocol.csv").write_text("id,score\n1,5\n")
    (tmp / "tab.tsv").write_text('review_body\tstars\n"Good" box\t5\nawful\tbox\t1\n')  # pasted: a tab in a text
    (tmp / "emptydir").mkdir()
    write_reviews(tmp / "threes.jsonl", 20, stars=(3,))
    write_reviews(tmp / "no5.jsonl", 20, stars=(1, 2, 3, 4))
    (tmp / "hole.src").write_text("\n" + (files / "train.src").read_text())  # line 1: no source
    (tmp / "hole.tgt").write_text("gamma\n" + (files / "train.tgt").read_text())
    (tmp / "holey.txt").write_text("good box\n\nawful box\n")
    (tmp / "nofieldlines.jsonl").write_text('{"german": "alpha"}\n')
    (tmp / "nan.jsonl").write_text('{"review_body": "ok", "stars": 1}\n{"review_body": "fine", "stars": NaN}\n')
    (tmp / "empty.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # a zip archive holding no file
    (tmp / "t.txt.zst").write_bytes(b"(\xb5/\xfd" + bytes(range(40)))
    (tmp / "42.json").write_text("42\n")
    shutil.copytree(runs / "generator", tmp / "nockpt")
    shutil.rmtree(tmp / "nockpt" / "checkpoint")  # a finished run whose checkpoints were deleted
    (tmp / "pairs.jsonl").write_text("".join(json.dumps({"de": f"a b {i}", "en": f"c d {i}"}) + "\n" for i in range(9)))
    (tmp / "topics.jsonl").write_text(
        "".join(json.dumps({"text": f"note {i}", "label": ["books", "music", "toys"][i % 3]}) + "\n" for i in range(30))
    )
    (tmp / "twice" / "a" / "b").mkdir(parents=True)
    shutil.copy(files / "text.txt", tmp / "twice" / "a" / "b" / "t.txt")  # **/**/*.txt reaches it three ways
    (tmp / "unseen.txt").write_text("Before we pro\u00adceed, \u00c4ll:\n" * 5)
    gone_text = tmp / "gone.txt"
    gone_text.write_text((files / "text.txt").read_text())
    assert (
        main(
            [
                "train",
                "generator",
                "--text",
                str(gone_text),
                "--set",
                "max_length=16",
                "--batch-size",
                "4",
                "--max-steps",
                "1",
                "--out",
                str(tmp / "gone"),
            ]
        )
        == 0
    )
    gone_text.unlink()
    run_config = tmp / "run.json"
    run_config.write_text(
        json.dumps({"task": "generator", "model": {"family": "generator"}, "train": {"max_steps": 1}, "data": {}})
    )
    return {
        "text": files / "text.txt",
        "train": files / "train.jsonl",
        "dev": files / "dev.jsonl",
        "tsrc": files / "train.src",
        "ttgt": files / "train.tgt",
        "vsrc": files / "val.src",
        "vtgt": files / "val.tgt",
        "gen": runs / "generator",
        "cls": runs / "classifier",
        "s2s": runs / "seq2seq",
        "tmp": tmp,
        "broken": tmp / "broken.json",
        "empty": tmp / "empty.txt",
        "latin1": tmp / "latin1.txt",
        "badgz": tmp / "bad.gz",
        "short": tmp / "short.txt",
        "short30": tmp / "short30.txt",
        "other": tmp / "other.txt",
        "nofield": tmp / "nofield.jsonl",
        "stars6": tmp / "stars6.jsonl",
        "badjson": tmp / "bad.jsonl",
        "notobj": tmp / "notobj.jsonl",
        "emptyreview": tmp / "emptyreview.jsonl",
        "csvnocol": tmp / "nocol.csv",
        "tabtsv": tmp / "tab.tsv",
        "emptydir": tmp / "emptydir",
        "threes": tmp / "threes.jsonl",
        "no5": tmp / "no5.jsonl",
        "holesrc": tmp / "hole.src",
        "holetgt": tmp / "hole.tgt",
        "runconfig": run_config,
        "gone": tmp / "gone",
        "gonefile": gone_text,
        "holey": tmp / "holey.txt",
        "badlines": tmp / "bad.jsonl",
        "nofieldlines": tmp / "nofieldlines.jsonl",
        "nanlabel": tmp / "nan.jsonl",
        "emptyzip": tmp / "empty.zip",
        "zstd": tmp / "t.txt.zst",
        "json42": tmp / "42.json",
        "nockpt": tmp / "nockpt",
        "pairtable": tmp / "pairs.jsonl",
        "topics": tmp / "topics.jsonl",
        "twice": tmp / "twice",
        "unseen": tmp / "unseen.txt",
    }


def fill(args, paths):
    return [a.format(**paths) for a in args]


def options_of(args):
    """The options the command of ``args`` takes (``["train", "classifier", ...]`` -> its parser's)."""
    from transformers_lite.cli.main import build_parser

    parser = build_parser()
    for word in args:
        sub = next((a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"), None)
        if sub is None or word not in sub.choices:
            break
        parser = sub.choices[word]
    return {option for action in parser._actions for option in action.option_strings}


def assert_names_only_its_options(args, line):
    """Every ``--option`` a message points at is one the command that printed it takes, or, after a
    command the message spells out (``tlite train classifier --train ...``), one that command takes."""
    own, *others = re.split(r"\btlite (?=[a-z])", line)
    for words, text in [(args, own), *((other.split(), other) for other in others)]:
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
        assert named <= options_of(words), (words[:2], sorted(named - options_of(words)), line)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_input_is_one_error_line(cli, paths, case):
    args, message = ERRORS[case]
    result = cli(*fill(args, paths))
    assert result.code == 1, (result.out, result.err)
    assert len(result.lines) == 1 and result.lines[0].startswith("tlite: error: "), result.err
    assert message.format(**paths) in result.lines[0]
    assert_names_only_its_options(args, result.lines[0])


@pytest.mark.parametrize("case", sorted(WARNINGS))
def test_changed_input_is_one_warning_line(cli, paths, case):
    args, message = WARNINGS[case]
    result = cli(*fill(args, paths))
    assert result.code == 0, result.err
    warnings = [line for line in result.lines if line.startswith("tlite: warning: ")]
    assert any(message in w for w in warnings), result.err
    for line in warnings:
        assert_names_only_its_options(args, line)


def test_cuda_without_a_gpu_is_one_line(cli, paths):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = cli(*fill(G + ["--device", "cuda"], paths))
    assert result.code == 1 and "torch sees no CUDA device" in result.err and len(result.lines) == 1


def test_a_long_translation_is_complete(paths, monkeypatch):
    """Every sentence of a long text is translated, not only the first max_length - 1 tokens."""
    import transformers_lite as tl
    from transformers_lite.generation import translate

    run = tl.load(paths["s2s"])
    long = "alpha beta gamma delta. " * 12
    pieces = translate.split_to_fit(run.src_tokenizer, long, run.config.max_length)
    assert len(pieces) > 1 and " ".join(pieces).split() == long.split()  # every word, in order
    assert all(len(run.src_tokenizer.encode(p)) <= run.config.max_length - 1 for p in pieces)
    word = run.tokenizer.encode("gamma")  # each piece "translates" to one known word
    monkeypatch.setattr(translate, "decode_batch", lambda model, src, bos, eos, settings: [word] * len(src))
    with pytest.warns(UserWarning, match="translated sentence by sentence"):
        [out] = translate.translate_texts(run.model, run.src_tokenizer, run.tokenizer, [long])
    assert out.split() == ["gamma"] * len(pieces)


def test_gzip_text_reads_like_plain_text(tmp_path):
    from transformers_lite.data.sources import read_text_file

    with gzip.open(tmp_path / "t.txt.gz", "wt") as fh:
        fh.write("\ufeffline one\r\nline two\r\n")
    assert read_text_file(tmp_path / "t.txt.gz") == "line one\nline two\n"  # BOM and CRLF gone


def test_docs_list_every_case_and_count_them():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text()
    ids = {line.split("`")[1] for line in doc.split("## Command lines")[1].splitlines() if line.startswith("| `")}
    assert set(ERRORS) | set(WARNINGS) <= ids
    counts = {
        line.split("|")[1].strip(): line.split("|")[2].strip().strip("*")
        for line in doc.split("## Count")[1].split("##")[0].splitlines()
        if line.startswith("| ") and "---" not in line
    }
    total = int(counts.pop("**all cases**"))
    assert total == len(ids) == sum(int(v) for k, v in counts.items() if k != "outcome")
    assert counts["accepted silently with a wrong or degraded result"] == "0"
    assert counts["Python traceback or misleading message"] == "0"

"""Predictions joined to the input (``cli/classify.py``): an ``--output`` named .csv, .tsv or .jsonl keeps
each record's columns (or its ``--id-column``) beside its prediction, in input order."""

import csv
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite.cli.main import main

CELLS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=12)
WORDS = st.sampled_from(["awful", "poor", "okay", "good", "superb", "box", "family"])


def classify(*args) -> int:
    return main(["classify", *map(str, args)])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.lists(WORDS, min_size=1, max_size=5).map(" ".join), min_size=1, max_size=6),
    notes=st.lists(CELLS, min_size=6, max_size=6),
    kind=st.sampled_from([".csv", ".tsv"]),
)
def test_a_table_in_gives_a_table_out_with_every_column_and_the_prediction(runs, tmp_path_factory, texts, notes, kind):
    folder = tmp_path_factory.mktemp("join")
    with open(folder / "in.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("id", "review_body", "note"), *((i, t, notes[i]) for i, t in enumerate(texts))])
    assert classify(runs / "classifier", "--input", folder / "in.csv", "--output", folder / f"out{kind}") == 0
    with open(folder / f"out{kind}", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="," if kind == ".csv" else "\t"))
    run = tl.load(runs / "classifier")
    classes = list(run.classify(texts[0])["probabilities"])
    assert list(rows[0]) == ["id", "review_body", "note", "prediction", *(f"probability_{c}" for c in classes)]
    expected = run.classify(texts)
    for i, (row, want) in enumerate(zip(rows, expected, strict=True)):
        assert (row["id"], row["review_body"], row["note"].replace("\r", "")) == (str(i), texts[i], notes[i])
        assert row["prediction"] == want["prediction"]
        assert [float(row[f"probability_{c}"]) for c in classes] == list(want["probabilities"].values())


def test_json_lines_keep_each_records_own_fields_and_an_id_column_keeps_only_the_id(runs, tmp_path):
    records = [{"id": 1, "review_body": "good box", "meta": {"shop": "a"}}, {"id": 2, "review_body": "awful box"}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert classify(runs / "classifier", "--input", tmp_path / "in.jsonl", "--output", tmp_path / "out.jsonl") == 0
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in o.items() if k not in ("prediction", "probabilities")} for o in out] == records
    assert all(o["prediction"] in o["probabilities"] for o in out)
    args = ["--input", tmp_path / "in.jsonl", "--id-column", "id", "--output", tmp_path / "ids.csv"]
    assert classify(runs / "classifier", *args) == 0
    lines = (tmp_path / "ids.csv").read_text().splitlines()
    assert lines[0].startswith("id,prediction,probability_")
    assert [line.split(",")[0] for line in lines[1:]] == ["1", "2"]


def test_plain_lines_keep_their_text_and_a_txt_output_keeps_one_label_a_line(runs, tmp_path):
    (tmp_path / "in.txt").write_text("good box\nawful box\n")
    assert classify(runs / "classifier", "--input", tmp_path / "in.txt", "--output", tmp_path / "out.csv") == 0
    rows = list(csv.DictReader(open(tmp_path / "out.csv", encoding="utf-8")))
    assert [r["text"] for r in rows] == ["good box", "awful box"]
    assert classify(runs / "classifier", "--input", tmp_path / "in.txt", "--output", tmp_path / "out.txt") == 0
    assert (tmp_path / "out.txt").read_text().splitlines() == [r["prediction"] for r in rows]


@pytest.mark.parametrize(
    "content, args, message",
    [
        ("good box\n", ["--id-column", "id"], "--id-column names a column of a table or JSON Lines --input"),
        ('{"review_body": "good"}\n', ["--id-column", "id"], "record 1 has no column 'id' (--id-column)"),
        ('{"review_body": "good", "prediction": "x"}\n', [], "has a column 'prediction', which the output writes"),
        ("good box\n", ["--output", "{tmp}/p.csv", "--json"], "--json writes JSON, but --output"),
    ],
)
def test_what_cannot_be_joined_is_one_error_line(runs, tmp_path, capsys, content, args, message):
    (tmp_path / "in.jsonl").write_text(content)
    args = [a.format(tmp=tmp_path) for a in args]
    assert classify(runs / "classifier", "--input", tmp_path / "in.jsonl", *args) == 1
    assert message in capsys.readouterr().err


def test_a_long_text_is_named_by_its_id_and_the_run_records_its_records(runs, tmp_path, capsys):
    run = tl.load(runs / "classifier")
    long = " ".join(["good"] * (run.config.max_length + 5))
    records = [{"ticket": "T-1", "review_body": "good box"}, {"ticket": "T-2", "review_body": long}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert classify(runs / "classifier", "--input", tmp_path / "in.jsonl", "--id-column", "ticket") == 0
    assert re.search(r"1 text\(s\) \(first: ticket T-2, \d+ words\) are longer than", capsys.readouterr().err)
    with pytest.warns(UserWarning, match=r"\(first: text 2, "):  # without an id, its place
        run.classify(["good box", long])
    recorded = json.loads((runs / "classifier" / "hyperparameters.json").read_text())["data"]
    assert recorded["train_records"] > 0 and recorded["val_records"] > 0 and "train_reviews" not in recorded


def test_the_help_speaks_of_any_table():
    from transformers_lite.cli.main import build_parser

    for path in (["classify"], ["train", "classifier"]):
        text = _help(build_parser(), path)
        assert "review " not in text.replace("review_body", "") and "reviews" not in text, path


def _help(parser, path):
    """The --help text of the subcommand at ``path``."""
    import argparse

    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser.format_help()

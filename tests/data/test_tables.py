"""Tables of records in every format the readers take: what is written is what is read, record for record."""

import csv
import json
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.data.reviews import (
    choose_classes,
    class_names_of,
    encode_labels,
    left_out,
    load_reviews,
    parse_label_map,
)
from transformers_lite.data.tables import has_header_line, is_sentence, pick_column, read_table
from transformers_lite.errors import ConfigError, DataError

# any text a user's table may hold: every printable and control character, line breaks of every kind,
# the delimiters and quotes; never empty once stripped (an empty text is an error, tested below)
TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(lambda t: t.strip())
RECORDS = st.lists(st.tuples(TEXTS, st.sampled_from(["neg", "pos", "neu", "7"])), min_size=1, max_size=12)


def write(path, records, kind):
    """``records`` ``[(text, label)]`` as a file of ``kind``, the way a user's tools write one."""
    if kind in ("csv", "tsv"):
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, delimiter="," if kind == "csv" else "\t")
            writer.writerow(["id", "comment", "sentiment"])
            writer.writerows([i, text, label] for i, (text, label) in enumerate(records))
    elif kind == "jsonl":
        path.write_text("".join(json.dumps({"comment": t, "sentiment": lab}) + "\n" for t, lab in records))
    elif kind == "json":
        path.write_text(json.dumps([{"comment": t, "sentiment": lab} for t, lab in records], ensure_ascii=False))
    return path


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "json"])
@settings(max_examples=40, deadline=None)
@given(records=RECORDS)
def test_every_record_comes_back_whole_and_the_header_is_never_one(tmp_path_factory, kind, records):
    if kind in ("csv", "tsv") and sys.version_info < (3, 11):  # Python 3.10's csv neither writes nor reads NUL
        records = [(t.replace("\x00", ""), lab) for t, lab in records if t.replace("\x00", "").strip()]
        if not records:
            return
    path = write(tmp_path_factory.mktemp(kind) / f"data.{kind}", records, kind)
    texts = [t.replace("\r\n", "\n").replace("\r", "\n") if kind in ("csv", "tsv") else t for t, _ in records]
    reviews = load_reviews(path)
    assert len(reviews) == len(records)  # a quoted line break does not split a record, the header is no record
    assert (reviews.text_column, reviews.label_column) == ("comment", "sentiment")
    if kind in ("jsonl", "json"):
        assert reviews.texts == texts
    else:  # the text is read as written, up to line-ending normalisation of the whole file
        assert [t.replace("\r", "\n") for t in reviews.texts] == texts
    assert [str(v) for v in reviews.values] == [lab for _, lab in records]


def test_parquet_and_a_datasets_folder_with_class_names(tmp_path):
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {"sentence": datasets.Value("string"), "label": datasets.ClassLabel(names=["sad", "happy"])}
    )
    data = datasets.Dataset.from_dict(
        {"sentence": ["what a day", "so tired", "lovely"], "label": [1, 0, 1]}, features=features
    )
    splits = datasets.DatasetDict({"train": data, "validation": data.select([0])})
    splits.save_to_disk(str(tmp_path / "ds"))
    reviews = load_reviews(tmp_path / "ds" / "train")
    assert reviews.texts == ["what a day", "so tired", "lovely"] and reviews.value_names == ["sad", "happy"]
    assert choose_classes(reviews, None, None) == (2, ("sad", "happy"))  # the dataset's own order and names
    assert encode_labels(reviews, 2, ("sad", "happy"))[0].tolist() == [1, 0, 1]
    with pytest.raises(DataError, match=r"holds the splits \['train', 'validation'\]: give one of them"):
        load_reviews(tmp_path / "ds")
    data.to_parquet(str(tmp_path / "d.parquet"))
    table = read_table(tmp_path / "d.parquet")
    assert [r["sentence"] for r in table.rows] == ["what a day", "so tired", "lovely"]
    assert table.where[1].endswith("d.parquet:row 2")


# what a plain TSV (``paste``, ``cut``, a database dump) holds: quote marks anywhere, as text, and never a
# tab or a line break; a text wholly in quotes with two quotes side by side inside is CSV quoting's own
# spelling and is read as such (see formats.tsv_is_quoted), so it is left out here
PLAIN = st.text(st.sampled_from("ab \"'.,!"), min_size=1, max_size=12).filter(
    lambda t: t.strip() and not (t.startswith('"') and t.endswith('"') and '""' in t[1:-1])
)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(PLAIN, min_size=1, max_size=8), quoted=st.booleans())
def test_a_plain_tsv_keeps_its_quote_marks_as_text(tmp_path_factory, texts, quoted):
    path = tmp_path_factory.mktemp("paste") / "pairs.tsv"
    if quoted:  # the same texts as a CSV library writes a TSV: quoted where they need it
        texts = [*texts, 'tab\there, "quoted"', "two\nlines"]
        with open(path, "w", newline="", encoding="utf-8") as f:
            csv.writer(f, delimiter="\t", lineterminator="\n").writerows(
                [("text", "label"), *((t, "x") for t in texts)]
            )
    else:  # as paste writes it
        path.write_text("text\tlabel\n" + "".join(f"{t}\tx\n" for t in texts), encoding="utf-8")
    table = read_table(path)
    assert [r["text"] for r in table.rows] == texts and table.columns == ["text", "label"]


def test_a_tsv_whose_fields_do_not_match_the_header_gets_advice_for_how_it_was_read(tmp_path):
    (tmp_path / "plain.tsv").write_text('text\tlabel\n"Hi" she said\tpos\nsee\tthis\tneg\n')
    with pytest.raises(
        DataError, match=r"plain.tsv:3: 3 fields where the header has 2 .*replace the tabs inside a text"
    ):
        read_table(tmp_path / "plain.tsv")
    (tmp_path / "quoted.tsv").write_text('text\tlabel\n"two\nlines"\tpos\n"a\tb"\tneg\tx\n')
    with pytest.raises(DataError, match=r"quoted.tsv:4: 3 fields .*a field in quotes may hold tabs"):
        read_table(tmp_path / "quoted.tsv")
    (tmp_path / "c.csv").write_text("text,label\nhello, world,pos\n")
    with pytest.raises(DataError, match=r"c.csv:2: 3 fields .*quote the fields that hold the delimiter"):
        read_table(tmp_path / "c.csv")


def _saved_dataset(datasets, path, columns):
    datasets.Dataset.from_dict(columns).save_to_disk(str(path))
    return path


def test_a_datasets_folder_trains_a_classifier_that_evaluate_and_classify_read(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    from transformers_lite.cli.main import main

    words = ("good", "great", "bad", "awful")
    texts = [f"it was {words[i % 4]} number {i}" for i in range(40)]
    folder = _saved_dataset(datasets, tmp_path / "ds", {"text": texts, "label": ["pos", "pos", "neg", "neg"] * 10})
    tiny = ["--set", "dim=16", "--set", "n_heads=2", "--set", "dim_hidden=32", "--set", "max_length=16"]
    tiny += ["--min-df", "1", "--embedding-init", "random", "--max-steps", "2", "--snapshots", "0"]
    assert main(["train", "classifier", "--train", str(folder), *tiny, "--out", str(tmp_path / "run")]) == 0
    recorded = json.loads((tmp_path / "run" / "hyperparameters.json").read_text())["data"]
    assert recorded["train"] == str(folder.resolve()) and len(recorded["train_sha256"]) == 64
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--data", str(folder), "--no-plots"]) == 0
    assert "n 40" in capsys.readouterr().out
    assert main(["evaluate", str(tmp_path / "run"), "--no-plots"]) == 0  # the run's own split of the folder
    assert main(["classify", str(tmp_path / "run"), "--input", str(folder), "--output", str(tmp_path / "p.txt")]) == 0
    assert len((tmp_path / "p.txt").read_text().splitlines()) == 40


def test_a_datasets_folder_of_pairs_trains_a_translator(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    from transformers_lite.cli.main import main

    src = [f"eins zwei {w}" for w in ("drei", "vier", "fuenf", "sechs")] * 10
    folder = _saved_dataset(datasets, tmp_path / "pairs", {"de": src, "en": [s[::-1] for s in src]})
    tiny = ["--set", "dim=16", "--set", "n_heads=2", "--set", "dim_hidden=32", "--set", "max_length=16"]
    tiny += ["--set", "n_encoder_blocks=1", "--set", "n_decoder_blocks=1", "--tokenizer", "word"]
    tiny += ["--max-tokens", "128", "--bleu-sentences", "0", "--max-steps", "2", "--snapshots", "0"]
    assert main(["train", "seq2seq", "--train-src", str(folder), *tiny, "--out", str(tmp_path / "run")]) == 0
    recorded = json.loads((tmp_path / "run" / "hyperparameters.json").read_text())["data"]
    assert recorded["train_src"] == str(folder.resolve()) and len(recorded["train_src_sha256"]) == 64
    assert (recorded["source_language"], recorded["target_language"]) == ("de", "en")
    assert "de -> en pairs from pairs: 38 training and 2 validation pairs" in capsys.readouterr().out


def test_columns_found_by_usual_names_then_by_the_longest_text(tmp_path):
    (tmp_path / "a.csv").write_text("Title,Review Text,Rating\nok,a long text about the thing,4\nhi,another one,2\n")
    table = read_table(tmp_path / "a.csv")
    assert pick_column(table, None, ("text",), "text", "--text-column") == "Review Text"  # the longest strings
    assert pick_column(table, None, ("label", "rating"), "labels", "--label-column") == "Rating"  # case-insensitive
    with pytest.raises(DataError, match=r"which column holds the labels\? columns are \['Title', 'Review Text'"):
        pick_column(table, None, ("label",), "labels", "--label-column")
    with pytest.raises(DataError, match="no column 'nope'"):
        load_reviews(tmp_path / "a.csv", text_column="nope")


@pytest.mark.parametrize(
    "content, message",
    [
        ("a,b\n1,2,3\n", r"t.csv:2: 3 fields where the header has 2"),
        ("a,a\n1,2\n", r"t.csv:1: the header repeats a column name"),
        ("", r"t.csv: the file is empty"),
        ("a,b\n", r"t.csv: no records found"),
    ],
)
def test_a_malformed_table_is_an_error_naming_the_line(tmp_path, content, message):
    (tmp_path / "t.csv").write_text(content)
    with pytest.raises(DataError, match=message):
        read_table(tmp_path / "t.csv")


def test_classes_from_the_data_integers_in_numeric_order_strings_sorted(tmp_path):
    rows = [("x", 10), ("y", 2), ("z", 1), ("w", 2)]
    path = write(tmp_path / "n.jsonl", rows, "jsonl")
    reviews = load_reviews(path)
    assert class_names_of(reviews) == ("1", "2", "10")
    assert encode_labels(reviews, 3, ("1", "2", "10"))[0].tolist() == [2, 1, 0, 1]
    assert choose_classes(reviews, None, None) == (3, ("1", "2", "10"))
    with pytest.raises(ConfigError, match=r"--labels 2, but .* holds 3 classes \(1, 2, 10\)"):
        choose_classes(reviews, 2, None)


def test_a_label_map_orders_merges_and_drops_values(tmp_path):
    path = write(tmp_path / "s.jsonl", [("a", 1), ("b", 3), ("c", 5), ("d", 2)], "jsonl")
    reviews = load_reviews(path)
    label_map = "1=low,2=low,3=,5=high,4=high"
    assert parse_label_map(label_map) == {"1": "low", "2": "low", "3": "", "5": "high", "4": "high"}
    with pytest.warns(UserWarning, match=r"'4' matches no label of .*s.jsonl: column 'sentiment'.*; no record has it"):
        assert choose_classes(reviews, None, label_map) == (2, ("low", "high"))
    labels, kept = encode_labels(reviews, 2, ("low", "high"), label_map)
    assert labels.tolist() == [0, 1, 0] and kept.tolist() == [0, 2, 3]  # 3 mapped to nothing: dropped
    assert left_out(reviews, kept, "training") == "left out 1 of 4 training records whose label is no class ('3': 1)"
    assert left_out(reviews, np.arange(4), "") == ""
    with pytest.raises(DataError, match=r"s.jsonl:2: label '3' is not a value the label map '1=low,2=low,5=hi"):
        encode_labels(reviews, 2, ("low", "high"), "1=low,2=low,5=high,4=high")
    with pytest.raises(DataError, match=r"'6', 'l' match no label .* and the map leaves out '5'; write each value"):
        choose_classes(reviews, None, "1=low,2=low,3=high,6=high,l=x")  # typos: named, and what they left out
    with pytest.raises(ConfigError, match="mapped twice"):
        parse_label_map("1=a,1=b")


def test_a_stars_column_keeps_the_star_tasks_and_one_class_is_refused(tmp_path):
    stars = load_reviews(write(tmp_path / "r.jsonl", [("a", 1), ("b", 3), ("c", 5)], "jsonl"), label_column="sentiment")
    assert choose_classes(stars, None, None) == (3, ("1", "3", "5"))  # not named 'stars': classes of the data
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps({"review_body": t, "stars": s}) + "\n" for t, s in [("a", 1), ("b", 4)]))
    marc = load_reviews(path)
    assert marc.is_stars and choose_classes(marc, None, None) == (5, ())
    assert choose_classes(marc, 2, None) == (2, ())
    with pytest.raises(ConfigError, match="star ratings make 5 classes"):
        choose_classes(marc, 3, None)
    one = load_reviews(write(tmp_path / "o.jsonl", [("a", "x"), ("b", "x")], "jsonl"))
    with pytest.raises(DataError, match="holds one class only"):
        choose_classes(one, None, None)


def test_a_nul_in_a_csv_is_read_or_named_by_its_line(tmp_path):
    """Python 3.11's csv reads a NUL inside a field; 3.10's refuses the line: then the error names it."""
    path = tmp_path / "nul.csv"
    path.write_text('text,label\n"a\x00b",pos\nhello,neg\n', encoding="utf-8")
    if sys.version_info >= (3, 11):
        assert read_table(path).texts("text") == ["a\x00b", "hello"]
    else:
        with pytest.raises(DataError, match=r"nul\.csv:2: malformed CSV"):
            read_table(path)


def test_a_header_is_told_from_a_record_taken_for_one():
    """A column name of three words, a sentence's end or over 30 characters reads like a record; a header
    of two words ("Review Text") does not. Only a CSV or TSV has a header line to mistake."""
    for header in ("text", "review_body", "Review Text", "source", "stars"):
        assert not is_sentence(header)
    for record in ("my card was charged twice", "Great!", "Ein Hund läuft.", "x" * 31):
        assert is_sentence(record)
    assert has_header_line("a.csv") and has_header_line("B.TSV.gz")
    assert not any(has_header_line(p) for p in ("a.json", "a.jsonl", "a.parquet", "folder"))


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(1, 40), min_size=1, max_size=12),
    frac=st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.5, 0.9]),
    seed=st.integers(0, 3),
)
def test_a_stratified_split_gives_each_class_its_share(counts, frac, seed):
    import numpy as np

    from transformers_lite.data.tables import split_validation

    labels = np.random.default_rng(seed).permutation(np.repeat(np.arange(len(counts)), counts))
    train, val = split_validation(len(labels), frac, seed, labels)
    assert sorted([*train.tolist(), *val.tolist()]) == list(range(len(labels)))  # disjoint, everything once
    for c, n in enumerate(counts):
        in_val, in_train = int((labels[val] == c).sum()), int((labels[train] == c).sum())
        assert in_train >= 1  # a class never loses its last training record
        if frac > 0 and n >= 2:
            assert in_val >= 1  # validation sees every class that has two records or more
        assert in_val <= max(int(np.ceil(frac * n)), 1)  # no more than its share (rounded up)
    target = int(np.floor(frac * len(labels)))
    assert abs(len(val) - target) <= len(counts)  # the share of the whole, give or take one a class
    again = split_validation(len(labels), frac, seed, labels)
    assert np.array_equal(val, again[1])  # seeded

import json

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from transformers_lite.data.reviews import load_reviews, task_labels
from transformers_lite.data.tables import split_validation
from transformers_lite.errors import ConfigError

from ..conftest import shared_data


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_jsonl_with_string_and_int_stars(tmp_path):
    path = write_jsonl(
        tmp_path / "r.jsonl", [{"review_body": "good", "stars": "5", "x": 1}, {"review_body": "bad", "stars": 1}]
    )
    r = load_reviews(path)
    assert r.texts == ["good", "bad"] and r.stars == [5, 1]


def test_csv_columns_named_or_found(tmp_path):
    (tmp_path / "a.csv").write_text('text,label\n"nice, really",4\nawful,2\n')
    r = load_reviews(tmp_path / "a.csv", text_column="text", label_column="label")
    assert r.texts == ["nice, really", "awful"] and r.stars == [4, 2] and not r.is_stars
    r = load_reviews(tmp_path / "a.csv")
    assert (r.text_column, r.label_column) == ("text", "label")


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"review_body": "x", "stars": "6"}\n', r"r.jsonl:1: stars value 6 is outside 1..5"),
        ('{"review_body": "x", "stars": 2}\n{"review_body": "x"}\n', r"r.jsonl:2: no 'stars' value"),
        ('{"review_body": "ok", "stars": 2}\n{"review_body": "  ", "stars": 2}\n', r"r.jsonl:2: empty 'review_body'"),
        ('{"review_body": "x", "stars": "five"}\n', r"r.jsonl:1: stars value 'five' is not an integer"),
        ('{"review_body": 5, "stars": 2}\n', r"r.jsonl:1: the 'review_body' value is a number \(5\), not a text"),
        ('{"review_body": {"a": 1}, "stars": 2}\n', r"r.jsonl:1: the 'review_body' value is an object"),
        ('{"review_body": null, "stars": 2}\n', r"r.jsonl:1: the 'review_body' value is null"),
        ("{not json\n", r"r.jsonl:1: invalid JSON"),
        ("", r"r.jsonl: (the file is empty|no records found)"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path, content, message):
    (tmp_path / "r.jsonl").write_text(content)
    with pytest.raises(ValueError, match=message):
        load_reviews(tmp_path / "r.jsonl").stars  # noqa: B018 - reading the stars checks them


def test_undecodable_bytes_and_missing_file(tmp_path):
    (tmp_path / "r.jsonl").write_bytes(b'{"review_body": "ok", "stars": 1}\n{"review_body": "\xff", "stars": 1}\n')
    with pytest.raises(ValueError, match=r"r.jsonl:2: bytes that are not UTF-8"):
        load_reviews(tmp_path / "r.jsonl")
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_reviews(tmp_path / "nope.jsonl")
    (tmp_path / "c.csv").write_text("body,stars\nx,1\n")
    with pytest.raises(ValueError, match="no column 'text'"):
        load_reviews(tmp_path / "c.csv", text_column="text")


def test_task_labels_five_class_and_binary_drops_three_stars():
    labels, kept = task_labels([1, 2, 3, 4, 5], 5)
    assert labels.tolist() == [0, 1, 2, 3, 4] and kept.tolist() == [0, 1, 2, 3, 4]
    labels, kept = task_labels([1, 2, 3, 4, 5, 3], 2)
    assert labels.tolist() == [0, 0, 1, 1] and kept.tolist() == [0, 1, 3, 4]
    with pytest.raises(ValueError, match="got --labels 3"):
        task_labels([1], 3)


def test_split_validation_is_seeded_and_disjoint():
    train, val = split_validation(100, 0.1, seed=7)
    assert len(val) == 10 and len(train) == 90
    assert sorted(np.concatenate([train, val]).tolist()) == list(range(100))
    again, _ = split_validation(100, 0.1, seed=7)
    other, _ = split_validation(100, 0.1, seed=8)
    assert np.array_equal(train, again) and not np.array_equal(train, other)


def test_real_review_counts():
    train = load_reviews(shared_data("amazon_reviews_multi_en", "train.jsonl"))
    dev = load_reviews(shared_data("amazon_reviews_multi_en", "dev.jsonl"))
    assert len(train) == 12_456 and len(dev) == 5_000
    assert np.bincount(dev.stars, minlength=6)[1:].tolist() == [1000] * 5


def test_a_quoted_csv_field_may_span_lines_and_errors_count_lines(tmp_path):
    (tmp_path / "r.csv").write_text('review_body,stars\n"alpha\nomega",5\n"two\nlines\nhere",1\nbad,9\n')
    with pytest.raises(ValueError, match=r"r.csv:7: stars value 9"):  # the 7th line, not the 4th record
        load_reviews(tmp_path / "r.csv").stars  # noqa: B018
    (tmp_path / "r.csv").write_text('review_body,stars\n"alpha\nomega",5\n')
    assert load_reviews(tmp_path / "r.csv").texts == ["alpha\nomega"]  # words not glued together


def test_json_strings_may_hold_unicode_line_separators(tmp_path):
    (tmp_path / "r.jsonl").write_text(
        json.dumps({"review_body": "one\u2028two\u0085three", "stars": 2}, ensure_ascii=False) + "\n"
    )
    assert load_reviews(tmp_path / "r.jsonl").texts == ["one\u2028two\u0085three"]


def test_a_byte_order_mark_does_not_hide_the_csv_header(tmp_path):
    (tmp_path / "r.csv").write_bytes("\ufeffreview_body,stars\r\nnice,4\r\n".encode("utf-8"))
    reviews = load_reviews(tmp_path / "r.csv")
    assert reviews.texts == ["nice"] and reviews.stars == [4]


LABEL_SETS = st.one_of(
    st.lists(st.sampled_from(["books", "music", "toys", "garden"]), min_size=2, max_size=4, unique=True),
    st.lists(st.integers(-3, 12), min_size=2, max_size=4, unique=True),
    st.lists(st.floats(-5, 15, allow_nan=False).map(lambda x: round(x, 1)), min_size=2, max_size=4, unique=True),
    st.lists(st.integers(0, 12).map(str), min_size=2, max_size=4, unique=True),
)


@settings(max_examples=40, deadline=None)
@given(labels=LABEL_SETS, mapped=st.booleans())
def test_an_ordering_is_asked_only_of_labels_that_have_one(tmp_path_factory, labels, mapped):
    """``--ordinal`` (mean absolute error over the classes' order) applies to labels that have an order:
    numbers (in their numeric order, 2.5 before 10), or names put in order by ``--label-map``; names the
    data gives in no order are refused naming them, never scored in alphabetical order."""
    from transformers_lite.data.reviews import value_name
    from transformers_lite.tasks.classifier import read_splits
    from transformers_lite.tasks.classifier_settings import ClassifierSettings

    names = [value_name(v) for v in labels]
    assume(len(set(names)) == len(names))
    path = write_jsonl(
        tmp_path_factory.mktemp("labels") / "l.jsonl",
        [{"text": f"text {i} of {value}", "label": value} for i in range(12) for value in labels],
    )
    label_map = ",".join(reversed(names)) if mapped else None
    settings_ = ClassifierSettings(train=str(path), label_column="label", ordinal=True, label_map=label_map)
    numbers = all(isinstance(v, (int, float)) or v.isdigit() for v in labels)
    if not (numbers or mapped):
        with pytest.raises(ConfigError, match=r"--ordinal: .* are names with no order"):
            read_splits(settings_, 0)
        return
    classes = read_splits(settings_, 0).classes[1]
    assert list(classes) == (list(reversed(names)) if mapped else sorted(names, key=float))

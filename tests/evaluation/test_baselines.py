"""The baselines: fitted on training texts, scored on validation texts like ``tlite evaluate``."""

import contextlib
import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.cli.main import main
from transformers_lite.errors import ConfigError
from transformers_lite.evaluation.baselines import (
    BASELINES,
    DEFAULT_BASELINE,
    NGRAM_MAX,
    score_baseline,
    settings_of,
)
from transformers_lite.tasks.classifier import read_splits
from transformers_lite.tasks.classifier_settings import ClassifierSettings

pytest.importorskip("sklearn")

WORDS = {"tech": "kernel compiler bytes", "food": "bread cheese soup", "misc": "weather cloud rain"}


def table(path, n=60):
    """A CSV of ``n`` texts labelled by a ``category`` column (strings, not stars); ``tech`` twice as common."""
    names = ["tech", "tech", "food", "misc"]
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text", "category"])
        for i in range(n):
            name = names[i % 4]
            writer.writerow([i, f"note {i}: {WORDS[name]} and more {'words ' * (i % 3)}", name])
    return path


def test_majority_predicts_the_most_common_training_class():
    train = (["a", "b", "c", "d"], np.array([2, 2, 0, 1]))
    val = (["x", "y"], np.array([2, 0]))
    r = score_baseline("majority", train, val, 3)
    assert r["confusion_matrix"] == [[0, 0, 1], [0, 0, 0], [0, 0, 1]]
    assert r["accuracy"] == 0.5 and r["parameters"] == 0 and r["n"] == 2


@pytest.mark.parametrize("name", ["tfidf", "tfidf-svm"])
def test_a_tfidf_baseline_separates_classes_told_apart_by_their_words(name):
    texts = [f"{WORDS[c]} {i}" for i in range(30) for c in WORDS]
    labels = np.array([k for _ in range(30) for k in range(3)])
    r = score_baseline(
        name, (texts, labels), (texts[:9], labels[:9]), 3, ordinal=True, **({"min_df": 1} if name == "tfidf" else {})
    )
    assert r["accuracy"] == 1.0 and r["macro_f1"] == 1.0 and r["mae"] == 0.0
    assert r["parameters"] == 3 * r["features"] + 3  # one weight per feature and class, one bias per class


def test_the_default_is_the_tuned_baseline():
    assert DEFAULT_BASELINE == "tfidf-svm" and set(BASELINES) == {"majority", "tfidf", "tfidf-svm"}


def test_tlite_baseline_reads_any_table_the_classifier_reads_with_its_split(tmp_path, capsys):
    data = table(tmp_path / "notes.csv")
    assert main(["baseline", "--train", str(data), "--label-column", "category", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["baseline"] for r in rows] == ["majority", "tfidf-svm"]
    splits = read_splits(ClassifierSettings(train=str(data), label_column="category"), 0)
    assert all(r["n"] == len(splits.val.texts) == 6 and r["train_records"] == 54 for r in rows)
    assert rows[0]["classes"] == ["food", "misc", "tech"] and rows[1]["accuracy"] == 1.0
    # a label map merges classes exactly as training's
    assert main(["baseline", "majority", "--train", str(data), "--label-map", "tech=tech,food=other,misc=other"]) == 0
    out = capsys.readouterr().out
    assert (
        "2 classes (tech, other); 54 training and 6 validation records" in out
        and out.count("\nmajority: accuracy") == 1
    )


def test_an_unknown_baseline_is_named(tmp_path, capsys):
    assert main(["baseline", "svm", "--train", str(table(tmp_path / "t.csv"))]) == 1
    assert "unknown baseline 'svm'; choose from majority, tfidf, tfidf-svm" in capsys.readouterr().err


def test_a_column_the_table_lacks_is_named_with_the_option(tmp_path, capsys):
    assert main(["baseline", "majority", "--train", str(table(tmp_path / "t.csv")), "--label-column", "topic"]) == 1
    err = capsys.readouterr().err
    assert "no column 'topic'; columns are ['id', 'text', 'category'] (--label-column)" in err


SETTINGS = {  # option -> (the setting it gives, values in range, values out of range)
    "--C": ("c", st.floats(1e-3, 1e3), st.sampled_from([0.0, -1.0, float("nan"), float("inf")])),
    "--max-features": ("max_features", st.integers(1, 10**6), st.integers(-5, 0)),
    "--min-df": ("min_df", st.integers(1, 45), st.integers(-5, 0) | st.integers(46, 10**6)),
    "--ngrams": ("ngram_max", st.integers(1, NGRAM_MAX), st.integers(-5, 0) | st.integers(NGRAM_MAX + 1, 10**6)),
}


@st.composite
def baseline_command(draw):
    kinds = draw(st.lists(st.sampled_from(sorted(BASELINES)), min_size=1, max_size=3, unique=True))
    options = draw(st.lists(st.sampled_from(sorted(SETTINGS)), max_size=3, unique=True))
    bad = draw(st.sampled_from([None, *options])) if options else None
    values = {o: draw(SETTINGS[o][2] if o == bad else SETTINGS[o][1]) for o in options}
    return kinds, values, bad


@settings(max_examples=40, deadline=None)
@given(command=baseline_command())
def test_every_setting_of_tlite_baseline_applies_or_is_refused(tmp_path_factory, command):
    """A TF-IDF setting given with baselines none of which takes it is refused by name (it would change
    nothing), a value out of its range is refused naming the option (``--min-df`` above the training
    records keeps no word), and an accepted one reaches the baselines that take it."""
    kinds, values, bad = command
    path = table(tmp_path_factory.mktemp("t") / "t.csv", 50)  # 45 training records, 5 held out
    unused = [o for o in values if not any(SETTINGS[o][0] in settings_of(k) for k in kinds)]
    args = ["baseline", *kinds, "--train", str(path), "--label-column", "category", "--json"]
    args += [str(a) for o, v in values.items() for a in (o, v)]
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(args)
    if unused or bad:
        assert code == 1, out.getvalue()
        [line] = err.getvalue().strip().splitlines()
        # checked in the options' order before the data is read; --min-df's upper bound once it is read
        early = [o for o in SETTINGS if o in unused or (o == bad and not (o == "--min-df" and values[o] > 0))]
        named = early[0] if early else bad
        assert line.startswith(f"tlite: error: {named} "), line
        return
    assert code == 0, err.getvalue()
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["baseline"] for r in results] == kinds
    for r in results:
        if "c" in settings_of(r["baseline"]) and "--C" in values:
            assert r["C"] == values["--C"]
        if r["baseline"] == "tfidf" and "--max-features" in values:
            assert r["features"] <= values["--max-features"]


def test_a_setting_for_another_baseline_is_refused_by_the_python_function_too():
    texts, labels = ["good day", "bad day"] * 5, np.array([1, 0] * 5)
    with pytest.raises(ConfigError, match="ngram_max is a setting of the tfidf baseline, not of the tfidf-svm"):
        score_baseline("tfidf-svm", (texts, labels), (texts, labels), 2, ngram_max=2)


def test_tfidf_svm_chooses_its_c_on_a_tenth_of_the_training_records():
    from transformers_lite.data.tables import split_validation
    from transformers_lite.evaluation.baselines import C_GRID, chosen_c, tfidf_svm

    rng = np.random.default_rng(0)
    texts = [
        f"{WORDS[c]} {' '.join(rng.choice(['x', 'y', 'z', 'kernel', 'soup'], 3))}" for c in WORDS for _ in range(30)
    ]
    labels = np.array([k for k in range(3) for _ in range(30)])
    c = chosen_c(texts, labels, 3)
    assert c in C_GRID
    # the same choice by hand: each C fitted on the nine tenths, scored on the stratified tenth
    from sklearn.svm import LinearSVC

    from transformers_lite.evaluation.baselines import _words_and_characters
    from transformers_lite.evaluation.metrics import confusion_matrix, macro_f1

    fit, held = split_validation(len(texts), 0.1, 0, labels)
    vectorizer = _words_and_characters()
    x_fit, x_held = vectorizer.fit_transform([texts[i] for i in fit]), vectorizer.transform([texts[i] for i in held])
    f1 = {
        g: macro_f1(
            confusion_matrix(
                labels[held], LinearSVC(C=g, class_weight="balanced").fit(x_fit, labels[fit]).predict(x_held), 3
            )
        )
        for g in C_GRID
    }
    assert f1[c] == max(f1.values()) and c == min(g for g in C_GRID if f1[g] == f1[c])
    _, info = tfidf_svm(texts, labels, 3)
    assert (info["C"], info["C_chosen"]) == (c, True)
    assert tfidf_svm(texts, labels, 3, c=0.5)[1]["C_chosen"] is False

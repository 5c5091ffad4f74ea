"""The baselines: fitted on training texts, scored on validation texts like ``tlite evaluate``."""

import csv
import json

import numpy as np
import pytest

from transformers_lite.cli.main import main
from transformers_lite.evaluation.baselines import BASELINES, DEFAULT_BASELINE, score_baseline
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

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.evaluation.metrics import accuracy, confusion_matrix, macro_f1, per_class_f1


def test_confusion_matrix_and_f1_by_hand():
    y_true = [0, 0, 1, 1, 1, 2]
    y_pred = [0, 1, 1, 1, 0, 2]
    m = confusion_matrix(y_true, y_pred, 3)
    assert m.tolist() == [[1, 1, 0], [1, 2, 0], [0, 0, 1]]
    # class 0: tp 1, fp 1, fn 1 -> F1 0.5; class 1: tp 2, fp 1, fn 1 -> 2/3; class 2: 1
    assert np.allclose(per_class_f1(m), [0.5, 2 / 3, 1.0])
    assert macro_f1(m) == pytest.approx((0.5 + 2 / 3 + 1) / 3)
    assert accuracy(y_true, y_pred) == pytest.approx(4 / 6)
    with pytest.raises(ValueError, match="differ in length"):
        confusion_matrix([0], [0, 1], 2)


def test_absent_class_scores_zero():
    m = confusion_matrix([0, 0], [0, 0], 2)
    assert per_class_f1(m).tolist() == [1.0, 0.0]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=60), st.integers(5, 7))
def test_chance_scores_equal_the_metrics_of_a_uniform_guess_and_of_the_majority_label(labels, k):
    from transformers_lite.evaluation.evaluate import chance_scores

    labels = np.array(labels)
    scores = chance_scores(labels, k)
    majority = np.full_like(labels, np.bincount(labels, minlength=k).argmax())
    assert scores["chance_accuracy"] == pytest.approx(1 / k)
    assert scores["majority_accuracy"] == pytest.approx(accuracy(labels, majority))
    assert scores["majority_macro_f1"] == pytest.approx(macro_f1(confusion_matrix(labels, majority, k)))


def test_ordinal_errors_by_hand():
    from transformers_lite.evaluation.metrics import ordinal_errors

    # misses of 0, 1, 2 and 4 classes: MAE 7/4, within one class 2 of 4
    assert ordinal_errors([0, 1, 2, 4], [0, 2, 0, 0]) == {"mae": 1.75, "off_by_one": 0.5}
    # always the middle of five balanced stars: MAE (2 + 1 + 0 + 1 + 2) / 5 = 1.2, off-by-one 3/5
    assert ordinal_errors([0, 1, 2, 3, 4], [2] * 5) == {"mae": 1.2, "off_by_one": 0.6}


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(2, 6),
    pairs=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=80),
)
def test_the_per_class_report_agrees_with_scikit_learn(k, pairs):
    from sklearn.metrics import classification_report

    from transformers_lite.evaluation.metrics import per_class_scores

    y_true, y_pred = [t % k for t, _ in pairs], [p % k for _, p in pairs]
    names = [f"c{i}" for i in range(k)]
    rows = per_class_scores(confusion_matrix(y_true, y_pred, k), names)
    theirs = classification_report(
        y_true, y_pred, labels=list(range(k)), target_names=names, output_dict=True, zero_division=0
    )
    assert [r["class"] for r in rows] == [*names, "macro avg", "weighted avg"]
    for row in rows:
        mine = theirs[row["class"]]
        assert row["support"] == mine["support"]
        for key, their_key in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            assert row[key] == pytest.approx(mine[their_key], abs=1e-12), (row["class"], key)
    assert rows[-2]["f1"] == pytest.approx(macro_f1(confusion_matrix(y_true, y_pred, k)))


def test_the_per_class_table_lines_up():
    from transformers_lite.evaluation.metrics import per_class_scores, per_class_table

    table = per_class_table(per_class_scores(np.array([[3, 1], [0, 2]]), ["spam", "ham"]))
    lines = table.splitlines()
    assert lines[0].split() == ["class", "precision", "recall", "f1", "support"]
    assert lines[1].split() == ["spam", "1.0000", "0.7500", "0.8571", "4"]
    assert lines[2].split() == ["ham", "0.6667", "1.0000", "0.8000", "2"]
    assert lines[3] == "" and lines[4].startswith("macro avg") and lines[5].startswith("weighted avg")
    assert len({len(line) for line in lines if line}) == 1  # the columns line up

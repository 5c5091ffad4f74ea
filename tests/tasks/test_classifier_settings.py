"""``--class-weights`` and ``--stratify``: parsing, the weights of each class, and what is refused."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.errors import ConfigError
from transformers_lite.tasks.classifier_settings import ClassifierSettings, class_weight_values, parse_class_weights

NAMES = ("neg", "neu", "pos")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=60))
def test_balanced_weights_are_scikit_learns(labels):
    from sklearn.utils.class_weight import compute_class_weight

    labels = np.array(labels)
    mine = class_weight_values("balanced", labels, NAMES)
    present = np.unique(labels)
    theirs = compute_class_weight("balanced", classes=present, y=labels)
    # scikit-learn weighs the classes present; a class with no training record gets 0 here
    assert mine[present] == pytest.approx(theirs * len(present) / len(NAMES))
    assert (mine[np.setdiff1d(np.arange(3), present)] == 0).all()
    assert (mine[labels].sum()) == pytest.approx(len(labels) * len(present) / len(NAMES))


def test_balanced_matches_scikit_learn_when_every_class_is_present():
    from sklearn.utils.class_weight import compute_class_weight

    labels = np.array([0] * 8 + [1] * 3 + [2])
    assert class_weight_values("balanced", labels, NAMES) == pytest.approx(
        compute_class_weight("balanced", classes=np.arange(3), y=labels)
    )


def test_weights_in_order_or_by_name():
    labels = np.array([0, 1, 2])
    assert class_weight_values("1,2,5", labels, NAMES).tolist() == [1, 2, 5]
    assert class_weight_values("pos=3, neg=0.5", labels, NAMES).tolist() == [0.5, 1, 3]
    assert parse_class_weights(" balanced ") == "balanced"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,2", "gives 2 weights for 3 classes \\(neg, neu, pos\\)"),
        ("pos=2,happy=1", "no class named 'happy'; the classes are neg, neu, pos"),
    ],
)
def test_weights_that_do_not_fit_the_classes_are_named(text, message):
    with pytest.raises(ConfigError, match=message):
        class_weight_values(text, np.array([0, 1, 2]), NAMES)


@pytest.mark.parametrize("text", ["1,-2,3", "a,b", "pos=x", "pos=2,3", "1,,2", "nan", "inf", "=2", "0"])
def test_bad_weights_are_refused_where_they_are_given(text):
    with pytest.raises(ConfigError, match="class_weights .* each weight a number > 0"):
        ClassifierSettings(class_weights=text)


def test_stratify_is_for_a_split_of_the_training_table():
    from transformers_lite.settings import inapplicable

    message = inapplicable(ClassifierSettings(val="dev.csv", stratify=False), ["stratify"])
    assert "stratify (--stratify) is used only when val (--val) is None" in message
    assert inapplicable(ClassifierSettings(), ["stratify"]) is None

"""A generator's baselines: xz given the training text and a Kneser-Ney character n-gram model, in bits per
character of the test text."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.evaluation.text_baselines import (
    DISCOUNTS,
    ORDERS,
    TEXT_BASELINES,
    CharNgrams,
    char_ngram,
    compressor,
    score_text_baseline,
)


def probability(model, context, char, discount):
    """P(char | context) from the totals: the bits of ``context + char`` less those of ``context``."""
    order = model.order
    return 2.0 ** -(model.bits(context + char, discount)[order] - model.bits(context, discount)[order])


@settings(deadline=None, max_examples=40)
@given(
    text=st.text(alphabet="abc d", min_size=1, max_size=60),
    context=st.text(alphabet="abcdz", max_size=6),
    order=st.integers(0, 4),
    discount=st.sampled_from([0.5, 0.75, 0.9]),
)
def test_the_next_characters_probabilities_sum_to_one(text, context, order, discount):
    """Over every character seen in training and one more standing for any other (``z`` is never seen)."""
    model = CharNgrams(text, order)
    seen = sorted(set(text))
    total = sum(probability(model, context, c, discount) for c in seen) + probability(model, context, "z", discount)
    assert total == pytest.approx(1.0)


def test_the_bottom_order_by_hand():
    """Order 0 of "aab", discount 0.75: P(a) = (2 - 0.75) / 3 + 0.75 x 2 / 3 x 1/3 (2 characters seen and 1 more)."""
    model = CharNgrams("aab", 0)
    assert probability(model, "", "a", 0.75) == pytest.approx(1.25 / 3 + 0.75 * 2 / 3 / 3)
    assert probability(model, "", "z", 0.75) == pytest.approx(0.75 * 2 / 3 / 3)


def test_a_longer_context_is_chosen_where_the_text_has_one():
    text = "".join(random.Random(0).choice(["abcde", "edcba"]) for _ in range(400))  # order 4 decides each letter
    result = char_ngram(text, text[:500])
    assert result["order"] >= 4 and result["order"] in ORDERS and result["discount"] in DISCOUNTS
    assert result["bits_per_char"] < 0.5  # a fifth of the letters carry the one bit of which word comes next


def test_the_compressor_knows_the_test_text_once_it_has_read_the_training_text():
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(300)]
    train, test = " ".join(words), " ".join(words[100:200])  # the test is a stretch of the training text
    result = compressor(train, test)
    assert result["bits_per_char"] < 0.2 * result["alone_bits_per_char"]
    assert 2.0 < result["alone_bits_per_char"] < 8.0


def test_each_baseline_says_what_it_is_and_how_long_it_took():
    for name in TEXT_BASELINES:
        r = score_text_baseline(name, "to be or not to be " * 50, "to be or not")
        assert r["baseline"] == name and r["n_chars"] == 12 and r["train_chars"] == 950 and r["seconds"] >= 0
        assert math.isfinite(r["bits_per_char"]) and r["bits_per_char"] >= 0

"""The statistics behind the posts' exploration figures, checked on texts counted by hand, and on the
real corpora when present (post 000: about 80 % of reviews under 260 characters)."""

import pytest

from transformers_lite.data.explore import character_frequencies, review_length_stats, word_stats

from ..conftest import shared_data


def test_review_length_stats_by_hand():
    texts = ["a" * 10, "b" * 300, "one two three", "x " * 60]
    stats = review_length_stats(texts)
    assert stats["reviews"] == 4
    assert stats["share_under_260_characters"] == 0.75  # 10, 13, 120 < 260; 300 is not
    assert stats["share_under_50_words"] == 0.75  # 1, 1, 3 words < 50; 60 is not
    assert review_length_stats(texts, cut=59)["share_over_59_words"] == 0.25  # only the 60-word review
    assert stats["max_characters"] == 300 and stats["max_words"] == 60
    with pytest.raises(ValueError, match="no reviews"):
        review_length_stats([])


def test_word_stats_and_character_frequencies_by_hand():
    text = "the cat and the hat; the end"
    stats = word_stats(text, top=2)
    assert stats["unique_words"] == 5 and stats["most_frequent"] == [("the", 3), ("cat", 1)]
    assert stats["share_below_10"] == 1.0
    freq = dict(character_frequencies("aab b"))
    assert freq == {"a": 2, "b": 2, " ": 1} and character_frequencies("aab b")[-1] == (" ", 1)
    assert character_frequencies("abca")[0] == ("a", 2)


def test_the_real_corpora_match_the_posts_figures():
    from transformers_lite.data.reviews import load_reviews

    reviews = load_reviews(shared_data("amazon_reviews_multi_en", "train.jsonl"))
    stats = review_length_stats(reviews.texts)
    assert 0.75 < stats["share_under_260_characters"] < 0.85  # the post: 80 %
    text = shared_data("tinyshakespeare", "input.txt").read_text()
    assert word_stats(text)["most_frequent"][0][0] == "the"  # as in the post's Complete Works

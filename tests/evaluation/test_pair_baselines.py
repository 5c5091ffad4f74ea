"""A translator's baselines: copying the source, and a translation memory by character n-gram TF-IDF."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.evaluation.pair_baselines import nearest_sources, score_pair_baseline, translation_memory

pytest.importorskip("sklearn")

TRAIN = (
    ["der rote Apfel liegt auf dem Tisch", "ein grüner Baum steht im Garten", "das blaue Meer", "die kleine Katze"],
    ["the red apple lies on the table", "a green tree stands in the garden", "the blue sea", "the little cat"],
)


def test_the_memory_returns_the_translation_of_the_nearest_source():
    found = translation_memory(TRAIN, ["das blaue Meer", "die kleinen Katzen", "ein grüner Bäume im Garten"])
    assert found == ["the blue sea", "the little cat", TRAIN[1][1]]  # an exact match, then the nearest


def test_the_memory_beats_copying_on_sentences_it_holds():
    test = (TRAIN[0][:2], TRAIN[1][:2])
    memory, copy = score_pair_baseline("memory", TRAIN, test), score_pair_baseline("copy", TRAIN, test)
    assert memory["bleu"] == pytest.approx(100.0) and memory["chrf"] == pytest.approx(100.0)
    assert copy["bleu"] < 10 and memory["train_pairs"] == 4 and memory["n"] == 2 and memory["seconds"] >= 0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet="abcdeäöü ", min_size=1, max_size=12), min_size=1, max_size=6), st.data())
def test_a_source_held_is_at_cosine_one_and_one_sharing_no_ngram_at_zero(train, data):
    train = [f"{t} x" for t in train]  # every source holds a word the vectorizer keeps
    query = data.draw(st.sampled_from(train))
    index, cosine = nearest_sources(train, [query, "zzz qqq"])
    assert index.shape == cosine.shape == (2,)
    assert cosine[0] == pytest.approx(1.0) and index[0] <= train.index(query)  # itself, or an equal one before it
    assert cosine[1] == 0 and index[1] == 0  # nothing in common: the first pair

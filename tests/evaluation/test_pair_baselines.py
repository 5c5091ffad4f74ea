"""A translator's baselines: copying the source, and a translation memory by character n-gram TF-IDF."""

import pytest

from transformers_lite.evaluation.pair_baselines import score_pair_baseline, translation_memory

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

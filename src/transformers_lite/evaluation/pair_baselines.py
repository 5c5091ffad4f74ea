"""Baselines for a translator: what a practitioner gets without a model, scored with BLEU and chrF.

* ``copy``: each source sentence as its own translation (between languages that share names, numbers
  and cognates this scores well above zero);
* ``memory``: a translation memory, the tool of every translation office: for each source sentence, the
  translation of the most similar training source, by the cosine of their TF-IDF vectors of character
  2-4-grams (within words, sublinear). On dictionary-style pairs (short phrases, many repeated) it is the
  floor to beat, far above copying. It needs scikit-learn (``pip install 'transformers-lite[baseline]'``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..optional import need
from .metrics import corpus_scores

CHUNK = 512  # test sentences compared with the whole memory at once (a dense row of scores each)


def copy_source(train: tuple[list[str], list[str]], sources: list[str]) -> list[str]:
    """The sources themselves."""
    return list(sources)


def nearest_sources(train_sources: list[str], sources: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``sources``, the index of the nearest of ``train_sources`` by the cosine of their TF-IDF
    vectors of character 2-4-grams (within words, sublinear), and that cosine: ``(M,)`` indices (the first
    on a tie, so an earlier source with the same vector wins over an exact match) and ``(M,)`` cosines (0 to 1,
    up to rounding)."""
    text = need("sklearn.feature_extraction.text", "baseline", "the translation memory")
    vectorizer = text.TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True)
    memory = vectorizer.fit_transform(train_sources)  # (N, F), rows of unit length
    queries = vectorizer.transform(sources)  # (M, F)
    index, cosine = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    for i in range(0, len(sources), CHUNK):
        scores = (queries[i : i + CHUNK] @ memory.T).toarray()  # (chunk, N)
        index.append(scores.argmax(axis=1))
        cosine.append(scores.max(axis=1))
    return np.concatenate(index), np.concatenate(cosine)


def translation_memory(train: tuple[list[str], list[str]], sources: list[str]) -> list[str]:
    """For each of ``sources``, the target of the training pair whose source is nearest (``nearest_sources``)."""
    return [train[1][j] for j in nearest_sources(train[0], sources)[0]]


# name -> (what it is, in one line; sources -> translations, given the training pairs)
PAIR_BASELINES: dict[str, tuple[str, Callable[[tuple[list[str], list[str]], list[str]], list[str]]]] = {
    "copy": ("each source sentence copied unchanged", copy_source),
    "memory": (
        "a translation memory: the target of the nearest training source by character 2-4-gram TF-IDF",
        translation_memory,
    ),
}


def score_pair_baseline(
    name: str, train: tuple[list[str], list[str]], test: tuple[list[str], list[str]]
) -> dict[str, Any]:
    """Baseline ``name`` of ``PAIR_BASELINES`` given the ``train`` pairs ``(sources, targets)``, scored with BLEU
    and chrF on the ``test`` pairs; ``seconds`` is what it took."""
    description, translate = PAIR_BASELINES[name]
    start = time.perf_counter()
    hypotheses = translate(train, test[0])
    return {
        "task": "baseline",
        "baseline": name,
        "description": description,
        **corpus_scores(hypotheses, test[1]),
        "n": len(test[0]),
        "train_pairs": len(train[0]),
        "seconds": time.perf_counter() - start,
    }

"""The numbers behind the posts' data-exploration figures (no drawing here: ``inspect.post_figures``).

* Post 000: how long the reviews are, in characters and words (80 % under 260 characters and 50 words
  in the post's corpus: the reason for its 50-token limit).
* Post 004 section 2.3: character frequencies and word statistics of the Shakespeare text (unique words,
  the share appearing fewer than 10 and 100 times, the most frequent words).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

WORD = re.compile(r"\w+")  # the post's count(r"\w+", text)


def review_lengths(texts: list[str]) -> dict[str, np.ndarray]:
    """Characters and words (``\\w+`` runs) per review."""
    return {
        "characters": np.array([len(t) for t in texts]),
        "words": np.array([len(WORD.findall(t)) for t in texts]),
    }


def review_length_stats(
    texts: list[str], char_limit: int = 260, word_limit: int = 50, cut: int = 128
) -> dict[str, float]:
    """Post 000's summary: the share of reviews under ``char_limit`` characters and under ``word_limit``
    words, with the median and the maximum of each; and the share longer than ``cut`` words (the
    classifier preset's ``max_length``: what truncation can touch)."""
    if not texts:
        raise ValueError("no reviews to measure")
    lengths = review_lengths(texts)
    chars, words = lengths["characters"], lengths["words"]
    return {
        "reviews": len(texts),
        f"share_under_{char_limit}_characters": round(float((chars < char_limit).mean()), 4),
        f"share_under_{word_limit}_words": round(float((words < word_limit).mean()), 4),
        f"share_over_{cut}_words": round(float((words > cut).mean()), 4),
        "median_characters": float(np.median(chars)),
        "median_words": float(np.median(words)),
        "max_characters": int(chars.max()),
        "max_words": int(words.max()),
    }


def character_frequencies(text: str) -> list[tuple[str, int]]:
    """Every character with its count, most frequent first (ties in character order)."""
    return sorted(Counter(text).items(), key=lambda kv: (-kv[1], kv[0]))


def word_stats(text: str, top: int = 10) -> dict[str, object]:
    """Post 004's word statistics (case-sensitive ``\\w+`` words): how many distinct words, the share of
    them seen fewer than 10 and fewer than 100 times, and the ``top`` most frequent."""
    counts = Counter(WORD.findall(text))
    if not counts:
        raise ValueError("the text has no words")
    n = np.array(list(counts.values()))
    return {
        "unique_words": len(counts),
        "share_below_10": round(float((n < 10).mean()), 4),
        "share_below_100": round(float((n < 100).mean()), 4),
        "most_frequent": counts.most_common(top),
    }

"""Baselines for a generator: what a practitioner computes first, in bits per character of the test text.

* ``xz``: a compressor given the training text. ``xz -9e`` (LZMA2 at preset 9, extreme) compresses the
  training text, then the training text followed by the test text; the difference is what the test costs
  once the training text is known: bits of test given train / characters of test. The test compressed
  alone is given beside it (what the compressor makes of the test text by itself).
* ``char-ngram``: a character n-gram model of the training text, interpolated Kneser-Ney (Chen and
  Goodman's best smoothing of the 1990s: each order's counts less a discount, what is taken given to the
  order below, whose counts are how many different characters precede a string rather than how often it
  occurs) down to a uniform choice over the characters seen and one more (any unseen character); its
  longest context and its discount chosen on the last tenth of the training text (``ORDERS``,
  ``DISCOUNTS``), as the TF-IDF baseline chooses its C on validation, then counted on all of it. On tiny
  Shakespeare's last tenth it scores 2.20 bits per character (context 6, discount 0.9).

Both read characters, so their figures compare with a model's bits per character whatever its tokenizer.
Pure Python and the standard library; each takes seconds on a few megabytes.
"""

from __future__ import annotations

import lzma
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

XZ_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]  # xz -9e, without the container
ORDERS = (1, 2, 3, 4, 5, 6, 7, 8)  # the longest contexts tried (characters), the best on held-out text kept
DISCOUNTS = (0.75, 0.9)  # Kneser-Ney's discounts tried, likewise


def _xz_bytes(text: str) -> int:
    return len(lzma.compress(text.encode("utf-8"), format=lzma.FORMAT_RAW, filters=XZ_FILTERS)) if text else 0


def compressor(train: str, test: str) -> dict[str, Any]:
    """Bits per character of ``test`` by xz -9e given ``train`` (and alone)."""
    given = 8 * max(_xz_bytes(train + test) - _xz_bytes(train), 0) / max(len(test), 1)
    return {"bits_per_char": given, "alone_bits_per_char": 8 * _xz_bytes(test) / max(len(test), 1)}


def _totals(grams: Counter[str]) -> tuple[Counter[str], Counter[str]]:
    """For the n-grams ``grams`` (a context and its next character): each context's total count, and how
    many different characters follow it."""
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for gram, n in grams.items():
        totals[gram[:-1]] += n
        kinds[gram[:-1]] += 1
    return totals, kinds


class CharNgrams:
    """A text's character n-grams with contexts of up to ``order`` characters, and interpolated Kneser-Ney
    probabilities of the next character: at the top order ``P(c | h) = max(C(hc) - D, 0) / C(h) + D T(h) / C(h)
    P'(c | h')``, ``h'`` the context one character shorter and ``T(h)`` the characters seen after ``h``; the
    orders below (``P'``) the same with continuation counts, the characters seen before ``hc`` instead of
    ``C(hc)``; at the bottom a uniform choice over the characters seen and one more."""

    def __init__(self, text: str, order: int) -> None:
        self.order = order
        self.grams = [Counter(text[i : i + k + 1] for i in range(len(text) - k)) for k in range(order + 1)]
        self.totals = [_totals(grams) for grams in self.grams]
        self.left: list[Counter[str]] = [Counter() for _ in range(order + 1)]  # characters seen before each
        for k in range(order):
            for gram in self.grams[k + 1]:
                self.left[k][gram[1:]] += 1
        self.left_totals = [_totals(left) for left in self.left]
        self.symbols = len(self.grams[0]) + 1  # the characters seen, and one for any other

    def bits(self, text: str, discount: float) -> list[float]:
        """Total bits of ``text`` with contexts of at most 0, 1, ..., ``order`` characters (each character given
        the ones before it within ``text``): one pass serves every order."""
        d, out = discount, [0.0] * (self.order + 1)
        for i, char in enumerate(text):
            lower = top = 1.0 / self.symbols
            deepest = min(self.order, i)
            for k in range(deepest + 1):
                context = text[i - k : i]
                (seen, after), (left, left_after) = self.totals[k], self.left_totals[k]
                n = seen.get(context, 0)
                top = (
                    max(self.grams[k].get(context + char, 0) - d, 0) / n + d * after[context] / n * lower
                    if n
                    else lower
                )
                out[k] -= math.log2(top)
                m = left.get(context, 0)
                if m:  # the next order's lower distribution: continuation counts
                    lower = max(self.left[k].get(context + char, 0) - d, 0) / m + d * left_after[context] / m * lower
            for rest in range(deepest + 1, self.order + 1):
                out[rest] -= math.log2(top)
        return out


def char_ngram(train: str, test: str) -> dict[str, Any]:
    """Bits per character of ``test`` under ``CharNgrams`` of ``train``, the longest context of ``ORDERS`` and
    the discount of ``DISCOUNTS`` chosen on the last tenth of ``train`` (counted on the rest)."""
    cut = len(train) - max(len(train) // 10, 1)
    held = CharNgrams(train[:cut], max(ORDERS))
    scores = {(order, d): total for d in DISCOUNTS for order, total in enumerate(held.bits(train[cut:], d))}
    order, discount = min(((o, d) for o, d in scores if o in ORDERS), key=lambda od: scores[od])
    bits = CharNgrams(train, order).bits(test, discount)[order]
    return {"bits_per_char": bits / max(len(test), 1), "order": order, "discount": discount}


# name -> (what it is, in one line; the scoring function)
TEXT_BASELINES: dict[str, tuple[str, Callable[[str, str], dict[str, Any]]]] = {
    "xz": ("xz -9e given the training text: bits of the test given the training text per character", compressor),
    "char-ngram": (
        "a character n-gram model of the training text (interpolated Kneser-Ney, its order and discount chosen on "
        "held-out text)",
        char_ngram,
    ),
}


def score_text_baseline(name: str, train: str, test: str) -> dict[str, Any]:
    """Baseline ``name`` of ``TEXT_BASELINES`` given the ``train`` text, scored on ``test`` in bits per
    character; ``seconds`` is what it took."""
    description, score = TEXT_BASELINES[name]
    start = time.perf_counter()
    result = score(train, test)
    return {
        "task": "baseline",
        "baseline": name,
        "description": description,
        **result,
        "train_chars": len(train),
        "n_chars": len(test),
        "seconds": time.perf_counter() - start,
    }

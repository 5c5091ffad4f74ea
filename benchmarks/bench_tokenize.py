"""Tokenize + index 100,000 reviews (simplify -> words -> truncate to 50 -> ids).

Target: <= 0.5 s on the 2-core CPU. Uses the real MARC train reviews (repeated to
100,000) and the posts' 6,653-word vocabulary from ../shared/data (or $TLITE_DATA_DIR).

    .venv/bin/python benchmarks/bench_tokenize.py [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from common import DATA, MACHINE

from transformers_lite.data.reviews import load_reviews
from transformers_lite.tokenizers import WordTokenizer, load_vocabulary
from transformers_lite.tokenizers.base import pad_batch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    reviews = load_reviews(DATA / "amazon_reviews_multi_en" / "train.jsonl")
    texts = (reviews.texts * (args.n // len(reviews) + 1))[: args.n]
    tok = WordTokenizer(
        load_vocabulary(DATA / "amazon_reviews_vocab" / "amazon_reviews_train_en.txt"), "[UNK]", pad="[PAD]"
    )
    times, plain = [], []
    for _ in range(args.repeats + 1):  # the vectorised path and the plain per-review path, alternating
        t0 = time.perf_counter()
        fast_ids, _ = tok.encode_batch(texts, max_length=50, pad_to=50)
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        plain_ids, _ = pad_batch([tok.encode(t, max_length=50) for t in texts], tok.need("pad"), 50)
        plain.append(time.perf_counter() - t0)
    assert torch.equal(fast_ids, plain_ids), "the two paths disagree"
    result = {
        "benchmark": "tokenize+index",
        "reviews": args.n,
        "first_s": round(times[0], 3),
        "median_s": round(statistics.median(times[1:]), 3),
        "best_s": round(min(times[1:]), 3),
        "plain_median_s": round(statistics.median(plain[1:]), 3),
        "speedup": round(statistics.median(plain[1:]) / statistics.median(times[1:]), 2),
        "machine": MACHINE,
    }
    print(
        json.dumps(result)
        if args.json
        else f"{args.n:,} reviews: median {result['median_s']} s (best {result['best_s']} s, first call "
        f"{result['first_s']} s); the plain per-review path {result['plain_median_s']} s "
        f"({result['speedup']}x) on {result['machine']}"
    )


if __name__ == "__main__":
    main()

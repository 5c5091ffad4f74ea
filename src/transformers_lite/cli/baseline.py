"""TF-IDF + logistic regression baseline for reviews.

Train and score the TF-IDF baseline with the same metrics as `tlite evaluate`.

    tlite baseline tfidf --train train.jsonl --val dev.jsonl --labels 5 --json
"""

from __future__ import annotations

import argparse

from ..evaluation.baselines import tfidf_baseline
from .common import command, print_json


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument("kind", choices=("tfidf",))
    p.add_argument("--train", required=True)
    p.add_argument("--val", required=True)
    p.add_argument("--labels", type=int, default=5, choices=(2, 5))
    p.add_argument("--max-features", type=int, default=5000)
    p.add_argument("--min-df", type=int, default=2)
    p.add_argument("--C", dest="c", type=float, default=1.0, help="inverse regularisation strength")
    p.add_argument("--ngrams", type=int, default=1, help="largest n-gram (1 = words)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    result = tfidf_baseline(args.train, args.val, args.labels, args.max_features, args.min_df, args.c, args.ngrams)
    if args.json:
        print_json(result)
    else:
        print(
            f"TF-IDF baseline: accuracy {result['accuracy']:.4f} | macro F1 {result['macro_f1']:.4f} | "
            f"{result['parameters']:,} parameters | n {result['n']:,}"
        )
    return 0

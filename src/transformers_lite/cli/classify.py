"""``tlite classify RUN_DIR "text" ...``: predicted stars (or sentiment) with class probabilities."""

from __future__ import annotations

import argparse
import json

from ..progress import interactive
from .common import add_run_and_texts, inputs, load_run, write_lines


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(
        name,
        help="classify review texts with a trained classifier",
        description="Print the predicted class and the probability of every class.",
        epilog='examples:\n  tlite classify RUN "Great coffee, fast delivery." "Broke after a day." --json\n'
        "  tlite classify RUN --input reviews.jsonl --output predictions.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_and_texts(p, "review texts")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    texts, as_jsonl = inputs(args, ("text", "review_body"))
    loaded = load_run(args, "classify")
    results = loaded.classify(texts, progress=len(texts) > 1024 and interactive())
    if as_jsonl:
        write_lines([json.dumps(r) for r in results], args.output)
    elif args.json:
        write_lines(
            [json.dumps({"task": "classifier", "labels": loaded.config.n_labels, "results": results})], args.output
        )
    elif args.output:
        write_lines([r["prediction"] for r in results], args.output)
    else:
        for r in results:
            shown = "  ".join(f"{n}: {x:.2f}" for n, x in r["probabilities"].items())
            print(f"{r['prediction']:>9} | {shown} | {r['text'][:60]}")
    return 0

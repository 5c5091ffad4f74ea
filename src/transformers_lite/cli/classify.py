"""Classify texts with a trained classifier.

Print the predicted class and the probability of every class.

    tlite classify RUN "Great coffee, fast delivery." "Broke after a day." --json
    tlite classify RUN --input reviews.jsonl --output predictions.jsonl
    tlite classify RUN --input tickets.csv --json
"""

from __future__ import annotations

import argparse

from ..evaluation.prediction import class_names
from ..numbers import json_text
from ..progress import interactive
from .common import add_run_and_texts, command, inputs, load_run, write_lines


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    add_run_and_texts(p, "review texts")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args, "classify")
    column = loaded.hyperparameters.get("data", {}).get("text_column")
    texts, as_jsonl = inputs(args, (column, "text", "review_body") if column else ("text", "review_body"))
    results = loaded.classify(texts, progress=len(texts) > 1024 and interactive())
    if as_jsonl:
        write_lines([json_text(r) for r in results], args.output)
    elif args.json:
        write_lines(
            [
                json_text(
                    {
                        "task": "classifier",
                        "labels": loaded.config.n_labels,
                        "classes": class_names(loaded.config),
                        "results": results,
                    }
                )
            ],
            args.output,
        )
    elif args.output:
        write_lines([r["prediction"] for r in results], args.output)
    else:
        for r in results:
            shown = "  ".join(f"{n}: {x:.2f}" for n, x in r["probabilities"].items())
            excerpt = " ".join(r["text"].split())[:60]  # one line per input, whatever the text holds
            print(f"{r['prediction']:>9} | {shown} | {excerpt}")
    return 0

"""``tlite classify RUN_DIR "text" ...``: predicted stars (or sentiment) with class probabilities."""

from __future__ import annotations

import argparse

from ..evaluation.prediction import check_texts, class_names, classify_texts
from .common import add_run_and_texts, load_run, print_json


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(name, help="classify review texts with a trained classifier",
                       description="Print the predicted class and the probability of every class.",
                       epilog='example: tlite classify RUN "Great coffee, fast delivery." "Broke after a day." --json')
    add_run_and_texts(p, "review texts")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args, "classifier")
    check_texts(args.texts, loaded.tokenizer, loaded.config.max_length)
    probs = classify_texts(loaded.model, loaded.tokenizer, args.texts)
    names = class_names(loaded.config.n_labels)
    results = [{"text": t, "prediction": names[int(p.argmax())],
                "probabilities": {n: round(float(x), 4) for n, x in zip(names, p)}} for t, p in zip(args.texts, probs)]
    if args.json:
        print_json({"task": "classifier", "labels": loaded.config.n_labels, "results": results})
    else:
        for r in results:
            shown = "  ".join(f"{n}: {x:.2f}" for n, x in r["probabilities"].items())
            print(f"{r['prediction']:>9} | {shown} | {r['text'][:60]}")
    return 0

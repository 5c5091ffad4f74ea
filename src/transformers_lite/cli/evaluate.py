"""Evaluate a trained run.

Evaluate a run: perplexity and bits per character (generator), accuracy/F1 + plots (classifier), BLEU and
chrF (seq2seq); --baseline adds the floor a practitioner computes first, fitted on the run's own training
data and scored on the same test: a tuned TF-IDF + linear model for a table, a translation memory for
pairs, a compressor and a character n-gram model for text.

    tlite evaluate outputs/20261120_1200 --json
    tlite evaluate RUN --text other.txt --json
    tlite evaluate RUN --data test.tsv --baseline
"""

from __future__ import annotations

import argparse
import inspect

from ..errors import ConfigError
from ..families import FAMILIES
from ..family import DEFAULT_BASELINE
from ..progress import interactive
from .common import add_device, command, load_run, print_json


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument("run", help="run directory")
    p.add_argument(
        "--text",
        help="generator: a text file, folder or pattern to score (a folder's or pattern's files in path order, each "
        "ending with a line break, one after another, as training reads them); mlm: a text file (default: the "
        "run's validation split or documents)",
    )
    p.add_argument(
        "--exclude",
        metavar="PATTERNS",
        help="generator: leave out of --text the files matching these comma-separated glob patterns (by name or "
        "path inside the folder)",
    )
    p.add_argument(
        "--data",
        help="a table (.jsonl, .csv, .tsv, .json, .parquet, a datasets folder) read with the run's columns: "
        "classifier: labelled texts, with the run's classes; seq2seq: pairs of source and target (default: the "
        "run's validation records or pairs)",
    )
    p.add_argument("--src", help="seq2seq: source sentences (default: the run's validation pairs)")
    p.add_argument("--ref", help="seq2seq: reference translations (with --src)")
    p.add_argument("--beam", type=int, default=1, help="seq2seq: beam size (1 = greedy) (default: 1)")
    p.add_argument("--no-plots", action="store_true", help="classifier: skip the PNG plots")
    p.add_argument(
        "--baseline",
        nargs="?",
        const=DEFAULT_BASELINE,
        metavar="NAME",
        help="also fit a baseline on the run's own training data and score it on the same test as the model; "
        + "; ".join(
            f"{f.name}: {', '.join(f.baselines)} (without NAME: {' and '.join(f.default_baselines)})"
            for f in FAMILIES.values()
            if f.baselines
        )
        + " (TF-IDF and the translation memory need scikit-learn)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args)
    mine = loaded.family.evaluate_options
    for other in FAMILIES.values():
        given = [
            f"--{n.replace('_', '-')}"
            for n in other.evaluate_options
            if n not in mine and getattr(args, n) not in (None, False, 1)
        ]
        if given:
            raise ConfigError(
                f"{' '.join(given)} is for {other.name} runs; {args.run} holds a {loaded.config.family} "
                f"(its options: {', '.join('--' + n.replace('_', '-') for n in mine)})"
            )
    options = dict(
        src=args.src,
        ref=args.ref,
        beam=args.beam,
        plots=not args.no_plots,
        baseline=args.baseline,
        exclude=args.exclude,
        progress=interactive(),
    )
    taken = inspect.signature(loaded.family.evaluate).parameters  # the others were refused above, or are unset
    result = loaded.evaluate(args.data or args.text, **{k: v for k, v in options.items() if k in taken})
    if args.json:
        print_json(result)
    else:
        print(loaded.family.scores_line(result))
    return 0

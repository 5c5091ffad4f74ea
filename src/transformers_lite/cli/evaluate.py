"""``tlite evaluate RUN_DIR``: metrics of a trained run (and plots for classifiers)."""

from __future__ import annotations

import argparse

from ..errors import ConfigError
from ..evaluation.evaluate import evaluate_classifier, evaluate_generator
from ..evaluation.translation import evaluate_translation
from ..inspect.classifier_plots import write_classifier_plots
from ..pipeline import evaluate_pretraining
from ..progress import interactive
from .common import add_device, load_run, print_json


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(
        name,
        help="evaluate a trained run",
        description="Evaluate a run: perplexity (generator), accuracy/F1 + plots (classifier), BLEU (seq2seq).",
        epilog="examples:\n  tlite evaluate outputs/20261120_1200 --json\n"
        "  tlite evaluate RUN --text other.txt --json\n"
        "  tlite evaluate RUN --data dev.jsonl --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run", help="run directory")
    p.add_argument(
        "--text", help="generator or mlm: text file to score (default: the run's validation split or documents)"
    )
    p.add_argument("--data", help="classifier: reviews file, .jsonl or .csv (default: the run's validation reviews)")
    p.add_argument("--src", help="seq2seq: source sentences (default: the run's validation pairs)")
    p.add_argument("--ref", help="seq2seq: reference translations (with --src)")
    p.add_argument("--beam", type=int, default=1, help="seq2seq: beam size (1 = greedy) (default: 1)")
    p.add_argument("--no-plots", action="store_true", help="classifier: skip the PNG plots")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_device(p)
    p.set_defaults(func=run)


FAMILY_OPTIONS = {
    "generator": ("text",),
    "classifier": ("data", "no_plots"),
    "seq2seq": ("src", "ref", "beam"),
    "mlm": ("text",),
}


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args)
    family = loaded.config.family
    for other, names in FAMILY_OPTIONS.items():
        given = [
            f"--{n.replace('_', '-')}"
            for n in names
            if other != family and n not in FAMILY_OPTIONS[family] and getattr(args, n) not in (None, False, 1)
        ]
        if given:
            raise ConfigError(
                f"{' '.join(given)} is for {other} runs; {args.run} holds a {family} "
                f"(its options: {', '.join('--' + n.replace('_', '-') for n in FAMILY_OPTIONS[family])})"
            )
    if family == "generator":
        result = evaluate_generator(loaded, args.text)
        text = f"loss {result['loss']:.4f} | perplexity {result['perplexity']:.3f} | {result['n_tokens']:,} tokens"
    elif family == "classifier":
        result, arrays = evaluate_classifier(loaded, args.data)
        if not args.no_plots:
            written = write_classifier_plots(loaded.run_dir, loaded.config.n_labels, arrays)
            result["plots"] = [str(p) for p in written]
        text = f"accuracy {result['accuracy']:.4f} | macro F1 {result['macro_f1']:.4f} | n {result['n']:,}" + "".join(
            f"\nwrote {p}" for p in result.get("plots", [])
        )
    elif family == "mlm":
        result = evaluate_pretraining(loaded, args.text)
        what = "masked" if "masked_accuracy" in result else "next"
        text = (
            f"loss {result['loss']:.4f} | {what}-word accuracy {result[f'{what}_accuracy']:.4f} | "
            f"perplexity {result['perplexity']:.2f} | {result['n_sequences']:,} sequences"
        )
    else:
        result = evaluate_translation(loaded, args.src, args.ref, beam=args.beam, progress=interactive())
        text = f"BLEU {result['bleu']:.2f} | chrF {result['chrf']:.2f} | n {result['n']:,}"
    if args.json:
        print_json(result)
    else:
        print(text)
    return 0

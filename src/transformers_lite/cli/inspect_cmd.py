"""Plot attention maps, next-token probabilities, embeddings, curves.

Write PNG plots into the run directory (or --out).

    tlite inspect all RUN --text "ROMEO:\\nBut soft" --prompt "ROMEO:"
    tlite inspect attention RUN --text "To be, or not" --block 2 --head 1
    tlite inspect next-token RUN --prompt ROMEO: --all-tokens
    tlite inspect attention SEQ2SEQ_RUN --src "Ein Hund." --tgt "A dog."
    tlite inspect compare RUN_NO_DROPOUT RUN_DROPOUT --metric accuracy --out figures
    tlite inspect sinusoid --dim 32 --length 50 --out figures
    tlite inspect trace RUN --text "ROMEO:" --head 1 --switch-off blocks.0.attention.head.2
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import validate
from ..atomic import atomic_write_text
from ..data.corpus import distinct
from ..errors import ConfigError, warn
from ..inspect.curves import write_training_curves
from ..inspect.examples import example_inputs
from ..inspect.generator_plots import KINDS
from ..inspect.post_figures import write_run_comparison, write_sinusoid
from ..inspect.readout import MAX_WINDOWS, validation_attention_distance
from ..inspect.report import trace_report
from ..inspect.trace_plots import write_trace
from ..numbers import json_text
from ..pipeline import Run
from .common import add_device, command, load_run

NO_RUN = ("sinusoid",)
SEVERAL_RUNS = ("curves", "compare")


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument(
        "kind",
        choices=(*KINDS, "trace", "backward", "curves", "compare", "sinusoid", "all"),
        help="trace (any run: every step of one forward pass over --text, or --src/--tgt, as trace.json and a "
        "PNG per block for --head); backward (the gradient of one example's loss at every step, hand-derived "
        "beside autograd, as backward.json); curves (any run: training loss and validation metrics); compare (several "
        "runs' training and validation --metric on one plot, e.g. post 000's dropout figure); sinusoid (the "
        "sinusoidal encoding, no run needed); for generators attention, next-token, positions (learned beside "
        "sinusoidal), embeddings, all; for translators attention",
    )
    p.add_argument("run", nargs="*", help="run directory (compare: several)")
    p.add_argument(
        "--text",
        help="text for the attention map or the trace (default: a few lines of the run's validation data)",
    )
    p.add_argument(
        "--prompt",
        help="generator: prompt for the next-token bars (default: the first line of that text)",
    )
    p.add_argument(
        "--all-tokens", action="store_true", help="next-token: bars for the whole vocabulary, not the top 20"
    )
    p.add_argument("--src", help="seq2seq: source sentence (default: the run's first validation sentence)")
    p.add_argument(
        "--tgt",
        help="seq2seq: target sentence (default: the model's greedy translation); backward of a classifier: "
        "the class whose loss (default: its prediction)",
    )
    p.add_argument(
        "--position",
        type=int,
        default=None,
        help="backward of a generator: the one position whose next-token loss (default: every position's mean)",
    )
    p.add_argument("--block", type=int, default=0, help="which block (default: 0)")
    p.add_argument("--head", type=int, default=0, help="which head (default: 0)")
    p.add_argument(
        "--switch-off",
        action="append",
        default=[],
        metavar="STEP",
        help="trace: run the forward with blocks.I.attention.head.N, NAME.unit.N or position switched off (repeatable)",
    )
    p.add_argument(
        "--windows",
        type=int,
        default=0,
        metavar="N",
        help="trace of a generator: also each head's mean attention distance over N context windows of its "
        "validation text",
    )
    p.add_argument("--metric", default="accuracy", help="compare: the metric to plot (default: accuracy)")
    p.add_argument("--dim", type=int, default=32, help="sinusoid: encoding dimension (default: 32)")
    p.add_argument("--length", type=int, default=50, help="sinusoid: positions (default: 50)")
    p.add_argument("--out", type=Path, default=None, help="folder for the PNGs (default: RUN/plots)")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    runs = [Path(r) for r in args.run]
    if args.kind in SEVERAL_RUNS:  # a run named twice: shown once
        runs = distinct(runs, f"inspect {args.kind}", "run", "shown")
    if args.kind in NO_RUN:
        if runs:
            raise ConfigError(f"inspect {args.kind} draws no run; drop {args.run[0]}")
        if not (2 <= args.dim <= 4096 and args.dim % 2 == 0 and 1 <= args.length <= 100_000):
            raise ConfigError(
                f"--dim must be even, 2..4096, and --length 1..100,000 (a figure of dim x length values), "
                f"got {args.dim} and {args.length}"
            )
        written = write_sinusoid(args.dim, args.length, args.out or Path("."))
    elif not runs:
        raise ConfigError(f"inspect {args.kind} needs a run directory")
    elif len(runs) > 1 and args.kind not in SEVERAL_RUNS:
        raise ConfigError(f"inspect {args.kind} takes one run; compare takes several")
    elif args.kind == "compare":
        written = [write_run_comparison(runs, args.metric, args.out or runs[0] / "plots")]
    elif args.kind == "trace":
        args.run = str(runs[0])
        loaded = load_run(args)
        _default_inputs(args, loaded)
        text = args.src if _translates(loaded) else args.text
        if not text:
            raise ConfigError(
                "inspect trace of a translator needs a non-empty --src SENTENCE"
                if _translates(loaded)
                else "inspect trace needs a non-empty --text"
            )
        validate.integer("--windows", args.windows, 0, high=MAX_WINDOWS)  # each window is one forward
        if args.windows and "windows" not in loaded.family.actions:
            raise ConfigError(f"--windows reads a generator's text; {args.run} holds a {loaded.config.family}")
        trace, report = trace_report(loaded, text, target=args.tgt, switched_off=args.switch_off)
        for notice in report["notices"]:  # what the model read differently from the text: said here too
            warn(notice)
        if not 0 <= args.head < loaded.config.n_heads:
            raise ConfigError(f"--head {args.head} is out of range: the model has {loaded.config.n_heads} heads")
        for row in report["lens"]:
            print(f"{row['at']:>14}: " + "  ".join(f"{t['token']!r} {t['p']:.3f}" for t in row["top"]))
        for name, heads in report["attention_distance"].items():
            print(f"{name}: mean attention distance per head " + " ".join(f"{d:.2f}" for d in heads))
        if args.windows:
            over = validation_attention_distance(loaded, args.windows)
            print(f"over {over['windows']} validation windows of {over['context']} tokens:")
            for name, heads in over["heads"].items():
                print(f"{name}: mean attention distance per head " + " ".join(f"{d:.2f}" for d in heads))
            report["validation_attention_distance"] = over
        written = write_trace(trace, report, args.out or runs[0] / "plots", args.head)
    elif args.kind == "backward":
        args.run = str(runs[0])
        loaded = load_run(args)
        _default_inputs(args, loaded)
        text = args.src if _translates(loaded) else args.text
        result = loaded.backward_trace(text, target=args.tgt, position=args.position)
        for note in result.forward.notes:  # what the model read of the text, as the trace says it
            warn(note)
        print(f"loss {result.loss:.6f}: {result.target}")
        for name, grad in result.grads.items():
            check = result.checks.get(name)
            hand = (
                f" | hand-derived ({' + '.join(check['kinds'])}) differs by {check['hand_max_diff']:.1e}"
                if check
                else f" | no hand rule: {result.missing.get(name, 'nothing it feeds has one')}"
            )
            print(f"{name:>44}  |grad| {float(grad.norm()):.3e}{hand}")
        out = args.out or runs[0] / "plots"
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "backward.json", json_text(result.to_json()))
        written = [out / "backward.json"]
    elif args.kind == "curves":
        written = [write_training_curves(r, args.out or r / "plots") for r in runs]
    else:
        args.run = str(runs[0])
        written = _model_plots(args, args.out or runs[0] / "plots")
    for path in written:
        print(f"wrote {path}")
    return 0


def _default_inputs(args: argparse.Namespace, loaded: Run) -> None:
    """Fill the inputs not given from the run's own validation data (``evaluation.examples``)."""
    if args.text is None or args.prompt is None or (args.src is None and _translates(loaded)):
        example = example_inputs(loaded)
        args.text = example["text"] if args.text is None else args.text
        args.prompt = example["prompt"] if args.prompt is None else args.prompt
        args.src = example["text"] if args.src is None and _translates(loaded) else args.src


def _translates(loaded: Run) -> bool:
    """A translator's run: its input is a source sentence (``--src``), not ``--text``."""
    return "translate" in loaded.family.actions


def _model_plots(args: argparse.Namespace, out: Path) -> list[Path]:
    loaded = load_run(args)
    _default_inputs(args, loaded)
    options = {k: getattr(args, k) for k in ("text", "prompt", "all_tokens", "src", "tgt", "block", "head")}
    return loaded.family.plots(loaded, (args.kind,), out, options)

"""``tlite inspect KIND RUN_DIR``: PNG plots of what a model learned (drawn by ``inspect``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ConfigError
from ..inspect.curves import write_training_curves
from ..inspect.generator_plots import KINDS, write_generator_plots
from ..inspect.seq2seq_plots import write_cross_attention
from .common import add_device, load_run


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(
        name,
        help="plot attention maps, next-token probabilities, embeddings",
        description="Write PNG plots into the run directory (or --out).",
        epilog='examples:\n  tlite inspect all RUN --text "ROMEO:\\nBut soft" --prompt "ROMEO:"\n'
        '  tlite inspect attention RUN --text "To be, or not" --block 2 --head 1\n'
        '  tlite inspect attention SEQ2SEQ_RUN --src "Ein Hund." --tgt "A dog."',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "kind",
        choices=(*KINDS, "curves", "all"),
        help="what to draw: curves (any run: training loss and validation metrics), or for generators "
        "attention, next-token, positions, embeddings, all; for translators attention",
    )
    p.add_argument("run", help="run directory")
    p.add_argument(
        "--text",
        default="ROMEO:\nBut soft, what light through yonder window breaks?",
        help="generator: text for the attention map (default: a line of Romeo and Juliet)",
    )
    p.add_argument(
        "--prompt",
        default="ROMEO:\nBut soft, what light",
        help="generator: prompt for the next-token bars (default: the start of that line)",
    )
    p.add_argument("--src", help="seq2seq: source sentence (required for seq2seq runs)")
    p.add_argument("--tgt", help="seq2seq: target sentence (default: the model's greedy translation)")
    p.add_argument("--block", type=int, default=0, help="which block (default: 0)")
    p.add_argument("--head", type=int, default=0, help="which head (default: 0)")
    p.add_argument("--out", type=Path, default=None, help="folder for the PNGs (default: RUN/plots)")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = args.out or Path(args.run) / "plots"
    if args.kind == "curves":
        print(f"wrote {write_training_curves(Path(args.run), out)}")
        return 0
    loaded = load_run(args)
    if loaded.config.family == "seq2seq":
        written = write_cross_attention(
            loaded.model, loaded.src_tokenizer, loaded.tokenizer, args.src, args.tgt, args.block, args.head, out
        )
    elif loaded.config.family == "generator":
        kinds = KINDS if args.kind == "all" else (args.kind,)
        written = write_generator_plots(
            loaded.model,
            loaded.tokenizer,
            out,
            kinds,
            text=args.text,
            prompt=args.prompt,
            block=args.block,
            head=args.head,
        )
    else:
        raise ConfigError("inspect supports generator and seq2seq runs; classifier plots come with `tlite evaluate`")
    for path in written:
        print(f"wrote {path}")
    return 0

"""``tlite translate RUN_DIR "Ein Mann fährt Fahrrad."``: translate with a trained seq2seq run."""

from __future__ import annotations

import argparse

from ..generation.translate import DecodeSettings, translate_texts
from .common import add_run_and_texts, load_run, print_json


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(name, help="translate sentences with a trained seq2seq model",
                       description="Greedy (default) or beam-search translation.",
                       epilog='example: tlite translate RUN "Ein Mann fährt Fahrrad." --beam 4 --json')
    add_run_and_texts(p, "source sentences")
    p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy) (default: 1)")
    p.add_argument("--length-penalty", type=float, default=1.0,
                   help="finished beams are ranked by log p / length**penalty (default: 1.0)")
    p.add_argument("--no-kv-cache", action="store_true", help="re-run the decoder over the whole prefix at each step")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args, "seq2seq")
    if args.beam < 1:
        raise ValueError(f"--beam must be >= 1, got {args.beam}")
    settings = DecodeSettings(beam=args.beam, length_penalty=args.length_penalty, use_cache=not args.no_kv_cache)
    outputs = translate_texts(loaded.model, loaded.src_tokenizer, loaded.tokenizer, args.texts, settings)
    if args.json:
        print_json({"task": "seq2seq", "beam": args.beam,
                    "translations": [{"source": s, "translation": t} for s, t in zip(args.texts, outputs)]})
    else:
        print("\n".join(outputs))
    return 0

"""Translate sentences with a trained seq2seq model.

Greedy (default) or beam-search translation.

    tlite translate RUN "Ein Mann fährt Fahrrad." --beam 4 --json
    tlite translate RUN --input sentences.de --output sentences.en --beam 4
"""

from __future__ import annotations

import argparse

from ..numbers import json_text
from ..progress import interactive
from .common import add_run_and_texts, command, inputs, load_run, write_lines


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    add_run_and_texts(p, "source sentences")
    p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy) (default: 1)")
    p.add_argument(
        "--length-penalty",
        type=float,
        default=1.0,
        help="finished beams are ranked by log p / length**penalty, a number in [-10, 10] (default: 1.0)",
    )
    p.add_argument("--no-kv-cache", action="store_true", help="re-run the decoder over the whole prefix at each step")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args, "translate")
    column = loaded.hyperparameters.get("data", {}).get("src_column")  # a table of pairs: its source column
    texts, as_jsonl = inputs(args, tuple(c for c in (column, "text", "source", "src") if c))
    outputs = loaded.translate(
        texts,
        beam=args.beam,
        length_penalty=args.length_penalty,
        use_cache=not args.no_kv_cache,
        progress=len(texts) > 64 and interactive(),
    )
    pairs = [{"source": s, "translation": t} for s, t in zip(texts, outputs)]
    if as_jsonl:
        write_lines([json_text(p, ensure_ascii=False) for p in pairs], args.output)
    elif args.json:
        write_lines(
            [json_text({"task": "seq2seq", "beam": args.beam, "translations": pairs}, ensure_ascii=False)], args.output
        )
    else:
        write_lines(list(outputs) if isinstance(outputs, list) else [outputs], args.output)
    return 0

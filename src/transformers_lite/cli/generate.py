"""Generate text from a trained generator.

Sample text; the same random --seed prints the same text, with or without the KV cache.

    tlite generate RUN --prompt "ROMEO:" --max-new-tokens 500 --temperature 0.8 --top-k 40 --seed 1 --stream
"""

from __future__ import annotations

import argparse
import itertools
import sys

from ..errors import ConfigError
from ..generation.generate import PATHS
from .common import add_device, command, load_run, print_json


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument("run", help="run directory")
    p.add_argument("--prompt", default="\n", help="text to continue (default: a newline)")
    p.add_argument("--max-new-tokens", type=int, default=500, help="tokens to generate (default: 500)")
    p.add_argument("--temperature", type=float, default=0.8, help="0 = greedy (default: 0.8)")
    p.add_argument("--top-k", type=int, default=None, help="sample among the k most likely tokens (default: all)")
    p.add_argument(
        "--top-p",
        type=float,
        default=None,
        help="sample among the most likely tokens holding this much probability (default: all)",
    )
    p.add_argument("--seed", type=int, default=1, help="random seed of the sampling, 0 to 4294967295 (default: 1)")
    p.add_argument("--stream", action="store_true", help="print tokens as they come")
    p.add_argument(
        "--num-samples",
        type=int,
        default=1,
        help="continuations sampled at once; sample i is the text --seed SEED+i gives alone (default: 1)",
    )
    p.add_argument(
        "--path",
        choices=PATHS,
        default="cache",
        help="cache (the model's forward with a KV cache: one new token per step), no-cache (the whole "
        "window at every token); both give the same text (default: cache)",
    )
    p.add_argument("--no-kv-cache", action="store_true", help="the same as --path no-cache")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--stride",
        type=int,
        default=None,
        help="once the context is full, the window restarts every STRIDE tokens (default: context/4; "
        "1 = always the last context tokens, as the posts)",
    )
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args, "generate")
    if args.max_new_tokens < 0:
        raise ConfigError(f"--max-new-tokens must be >= 0, got {args.max_new_tokens}")
    if args.num_samples < 1:
        raise ConfigError(f"--num-samples must be >= 1, got {args.num_samples}")
    if args.stream and (args.num_samples > 1 or args.json):
        raise ConfigError("--stream prints one sample as it comes; drop --num-samples/--json, or --stream")
    sampling = dict(
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        stride=args.stride,
        path="no-cache" if args.no_kv_cache else args.path,
    )
    if args.stream:
        tokens = loaded.stream(args.prompt, args.max_new_tokens, **sampling)
        first = next(tokens, None)  # the prompt is checked (and warned about) before anything is printed
        sys.stdout.write(args.prompt)
        for token in itertools.chain([first] if first else [], tokens):
            sys.stdout.write(token["text"])
            sys.stdout.flush()
        sys.stdout.write("\n")
        return 0
    texts = loaded.generate(args.prompt, args.max_new_tokens, num_samples=args.num_samples, **sampling)
    texts = [texts] if isinstance(texts, str) else texts
    if args.json:
        print_json(
            {
                "task": "generator",
                "seed": args.seed,
                "samples": [{"seed": args.seed + i, "text": t} for i, t in enumerate(texts)],
            }
        )
    else:
        print(
            "\n\n".join(texts)
            if args.num_samples == 1
            else "\n\n".join(f"--- sample {i + 1} (seed {args.seed + i})\n{t}" for i, t in enumerate(texts))
        )
    return 0

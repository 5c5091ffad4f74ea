"""Options and helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json

from ..devices import resolve_device
from ..errors import RunError
from ..training.runs import LoadedRun, load


def add_device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="auto",
                        help="where to run: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N, mps (default: auto)")


def add_run_and_texts(parser: argparse.ArgumentParser, texts: str) -> None:
    """The arguments every inference command takes: the run, the texts, --json and --device."""
    parser.add_argument("run", help="run directory")
    parser.add_argument("texts", nargs="+", help=texts)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_device(parser)


def print_json(data: object) -> None:
    print(json.dumps(data))


def load_run(args: argparse.Namespace, family: str | None = None) -> LoadedRun:
    """Load ``args.run`` on ``args.device``; with ``family``, insist the run holds that model family."""
    loaded = load(args.run, resolve_device(args.device))
    if family is not None and loaded.config.family != family:
        raise RunError(f"{args.run} holds a {loaded.config.family} model, not a {family}")
    return loaded

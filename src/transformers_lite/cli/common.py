"""Options and helpers shared by the subcommands."""

from __future__ import annotations

import argparse

import torch


def add_device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                        help="where to run (auto: cuda when available)")


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was asked for but torch sees no CUDA device; use --device cpu")
    return name


def print_json(data: object) -> None:
    import json

    print(json.dumps(data))


def load_run(args: argparse.Namespace, family: str | None = None):  # noqa: ANN201 - a LoadedRun
    """Load ``args.run`` on ``args.device``; with ``family``, insist the run holds that model family."""
    from ..training.checkpoint import load

    loaded = load(args.run, resolve_device(args.device))
    if family is not None and loaded.config.family != family:
        raise ValueError(f"{args.run} holds a {loaded.config.family} model, not a {family}")
    return loaded

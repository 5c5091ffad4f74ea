"""Print a model's layers and parameter counts.

Print each layer, its shape and parameter count, like the posts' printed models.

    tlite summary post-gpt --set n_blocks=6
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import apply_overrides, load_config
from ..models import build_model
from ..recipes import get_preset
from ..summary import summary
from .common import command


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument("model", help="a preset name, a config JSON file, or a run directory")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config field")
    p.set_defaults(func=run)


def resolve_config(spec: str):  # noqa: ANN201
    path = Path(spec)
    if path.is_dir():
        return load_config(path / "config.json")
    if path.suffix == ".json" or path.is_file():
        return load_config(path)
    return get_preset(spec).model


def run(args: argparse.Namespace) -> int:
    config = apply_overrides(resolve_config(args.model), args.set)
    print(summary(build_model(config)))
    return 0

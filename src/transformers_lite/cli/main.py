"""Entry point of ``tlite``: builds the parser from the subcommand modules and reports errors in one line."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand name -> module in transformers_lite.cli; each module has add_parser(subparsers) and run(args)
SUBCOMMANDS = {
    "train": "train",
    "evaluate": "evaluate",
    "generate": "generate",
    "classify": "classify",
    "translate": "translate",
    "summary": "summary",
    "inspect": "inspect_cmd",
    "data": "data",
    "baseline": "baseline",
    "backprop": "backprop",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlite",
        description="transformers-lite: build, train and inspect transformers from first principles.",
        epilog="example: tlite summary seed-classifier",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"transformers-lite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(f"{__package__}.{module_name}")
        except ModuleNotFoundError as err:
            if err.name and err.name.endswith(module_name):
                continue  # subcommand not built yet
            raise
        module.add_parser(sub, name)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, NotADirectoryError, PermissionError, KeyError) as err:
        msg = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"tlite: error: {msg}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tlite: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0

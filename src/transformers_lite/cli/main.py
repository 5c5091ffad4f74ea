"""Entry point of ``tlite``: builds the parser from the subcommand modules and reports errors in one line."""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from ..errors import TliteWarning, os_error_text
from ..version import __version__
from .output import OutputError, guarded_stdout, quiet_broken_pipe

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
    "exercise": "exercise",
    "import-hf": "hf",
    "export-hf": "hf",
    "serve": "serve",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlite",
        description="transformers-lite: build, train and inspect transformers from first principles.",
        epilog="example: tlite summary post-classifier",
    )
    parser.add_argument("--version", action="version", version=f"transformers-lite {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the Python traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in SUBCOMMANDS.items():
        importlib.import_module(f"{__package__}.{module_name}").add_parser(sub, name)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """Warnings as one line on stderr: ``tlite: warning: ...`` (library details stay out of sight)."""
    print(f"tlite: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run one ``tlite`` command; its exit code. Standard output is checked (``output``): a write that
    went nowhere is an error (exit 1), a reader that went away (``| head``) ends the command quietly (0)."""
    with guarded_stdout() as output:
        try:
            try:
                code = _command(argv)
            except SystemExit:  # argparse's --help, --version and usage errors print too
                output.finish()
                raise
            output.finish()
            return code
        except BrokenPipeError:
            quiet_broken_pipe(output)
            return 0
        except OutputError as err:
            print(f"tlite: error: {err}", file=sys.stderr)
            return 1


def _command(argv: list[str] | None) -> int:
    warnings.showwarning = _show_warning
    warnings.simplefilter("always", TliteWarning)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (BrokenPipeError, OutputError):  # standard output's: ``main`` says what they mean
        raise
    except KeyboardInterrupt:
        print("tlite: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as err:  # bad input, missing or unwritable files: one line, no traceback
        if args.debug:
            raise
        # an OS error: one line naming the file, whatever its name holds (``errors.os_error_text``)
        text = os_error_text(err) if isinstance(err, OSError) else str(err)
        print(f"tlite: error: {text}", file=sys.stderr)
        return 1
    except (RuntimeError, MemoryError) as err:
        if _out_of_memory(err) and not args.debug:  # a size the machine cannot hold: the user's to lower
            first = (str(err).splitlines() or [""])[0][:160]
            print(
                f"tlite: error: out of memory ({first}); lower --batch-size, the context (--set max_length=...), "
                "--num-samples or --max-new-tokens",
                file=sys.stderr,
            )
            return 1
        if args.debug:
            raise
        return _internal_error(err)
    except Exception as err:  # a bug: still one line, the traceback on request
        if args.debug:
            raise
        return _internal_error(err)


def _out_of_memory(err: BaseException) -> bool:
    text = str(err)
    return isinstance(err, MemoryError) or "can't allocate memory" in text or "out of memory" in text.lower()


def _internal_error(err: BaseException) -> int:
    print(
        f"tlite: internal error: {type(err).__name__}: {err} (run again with --debug for the traceback, "
        "and please report it)",
        file=sys.stderr,
    )
    return 1

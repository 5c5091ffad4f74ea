"""Options and helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from collections.abc import Callable
from typing import Any

from ..atomic import atomic_write_text
from ..data.formats import read_text
from ..data.inputs import read_input_records
from ..data.tables import TEXT_COLUMNS, is_sentence, is_table, pick_column, read_table
from ..errors import ConfigError, warn
from ..families import load
from ..numbers import json_text
from ..pipeline import Run

RUN_ACTIONS = ("generate", "classify", "translate")  # the commands a run of some family answers


def command(sub, name: str, doc: str, *examples: str) -> argparse.ArgumentParser:  # noqa: ANN001
    """A subcommand's parser from its help text ``doc`` (the command module's docstring): the first line is
    its line in ``tlite --help``, the paragraphs after it head its own ``--help`` (wrapped to the terminal),
    and its indented lines are examples, printed below the options with ``examples`` after them."""
    summary, _, rest = doc.strip().partition("\n")
    lines = rest.splitlines()
    shown = [line.strip() for line in lines if line.startswith("    ")] + list(examples)
    paragraphs = "\n".join(line for line in lines if not line.startswith("    ")).strip().split("\n\n")
    width = shutil.get_terminal_size().columns - 2
    return sub.add_parser(
        name,
        help=(summary[0].lower() if summary[1:2].islower() else summary[0]) + summary[1:].removesuffix("."),
        description="\n\n".join(textwrap.fill(" ".join(p.split()), width) for p in paragraphs if p.strip()),
        epilog=("example:" if len(shown) == 1 else "examples:") + "".join(f"\n  {e}" for e in shown),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def show_help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """What a command group does when no subcommand is named: print its help and exit with 2."""

    def run(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    return run


def add_device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device",
        default="auto",
        help="where to run: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N, mps (default: auto)",
    )
    parser.add_argument(
        "--trust-edited",
        action="store_true",
        help="load the run even if its config, tokenizer or weights file was edited after training "
        "(by default such a run is refused, naming the file)",
    )


def add_run_and_texts(parser: argparse.ArgumentParser, texts: str) -> None:
    """The arguments every inference command takes: the run, texts (or a file of them), output, device."""
    parser.add_argument("run", help="run directory")
    parser.add_argument("texts", nargs="*", help=f"{texts} (or --input FILE)")
    parser.add_argument(
        "--input",
        metavar="FILE",
        help="one input per line: plain text, or JSON Lines with a 'text' field; one per record of a table "
        "(.csv, .tsv, .json, .parquet, a datasets folder) from its text column; - reads standard input",
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="write the results here, one per input line, in order (default: standard output)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="JSON output (with --input: JSON Lines, one object per line; the default when the input is JSON Lines)",
    )
    add_device(parser)


def inputs(args: argparse.Namespace, fields: tuple[str, ...] = ("text",)) -> tuple[list[str], bool]:
    """``(texts, as_jsonl)``: the texts given as arguments, the lines of ``--input``, or the records of a
    table given as ``--input`` (its first column among ``fields``, else its usual text column)."""
    texts, _, as_jsonl = input_records(args, fields)
    return texts, as_jsonl


def input_records(
    args: argparse.Namespace, fields: tuple[str, ...] = ("text",)
) -> tuple[list[str], list[dict[str, Any]] | None, bool]:
    """``(texts, records, as_jsonl)``: as ``inputs``, with the records of a table or JSON Lines ``--input``
    whole (their other columns, for the output to keep beside each result); None for plain texts."""
    if args.texts and args.input:
        raise ConfigError("give texts as arguments or --input FILE, not both")
    output = getattr(args, "output", None)
    if (
        args.input not in (None, "-")
        and output
        and os.path.isfile(args.input)  # regular files: /dev/stdin and /dev/stdout may name one terminal
        and os.path.isfile(output)
        and os.path.samefile(args.input, output)
    ):
        raise ConfigError(f"--output {output} is the --input file: it would be written over; give another file")
    if args.input and args.input != "-":
        content = ("", "dataset") if os.path.isdir(args.input) else read_text(args.input)  # read once
        kind = content[1]
        if kind in ("json", "parquet", "dataset") or (kind in ("csv", "tsv") and is_table(args.input)):
            table = read_table(args.input, None if kind == "dataset" else content)  # records: a header is no input
            column = pick_column(table, None, (*fields, *TEXT_COLUMNS), "text")
            if table.kind and is_sentence(column):  # line 1 is a text, read as the header
                warn(
                    f"{args.input}: line 1 reads like a text, not a header naming the columns; it was taken as the "
                    f"header ({column!r}) and gets no output: add a header line 'text', or name the file .txt for "
                    "one text per line"
                )
            return table.texts(column), table.rows, args.json
        texts, records = read_input_records(args.input, fields, content)
        return texts, records, records is not None or args.json
    if args.input:
        texts, records = read_input_records(args.input, fields)
        return texts, records, records is not None or args.json
    if not args.texts:
        raise ConfigError("give at least one text, or --input FILE (- for standard input)")
    return args.texts, None, False


def write_lines(lines: list[str], output: str | None) -> None:
    """One line per result to ``output`` (written atomically, see ``atomic``) or standard output. A
    result holding a line break (a translation whose vocabulary has one) gets a space there instead,
    so output line ``i`` is always the result of input line ``i``."""
    text = "".join(line.replace("\r\n", " ").replace("\n", " ").replace("\r", " ") + "\n" for line in lines)
    if output:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)


def print_json(data: object) -> None:
    """One JSON object on standard output; a number too large for a float is written in words (``numbers``)."""
    print(json_text(data))


def load_run(args: argparse.Namespace, action: str | None = None) -> Run:
    """Load ``args.run`` on ``args.device``; with ``action``, insist the run can do it (``generate``, ...)."""
    loaded = load(args.run, args.device, trust_edited=args.trust_edited)
    if action is not None and action not in loaded.family.actions:
        can = ", ".join(a for a in loaded.family.actions if a in RUN_ACTIONS) or "none of generate, classify, translate"
        raise ConfigError(f"{args.run} holds a {loaded.config.family} model, which cannot {action} (it can: {can})")
    return loaded

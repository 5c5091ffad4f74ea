"""Corpus statistics, preparation and downloads.

Work with the corpora: statistics, Gutenberg preparation, downloads.

    tlite data stats input.txt --plot figures
    tlite data lengths train.jsonl --plot figures
    tlite data download tinyshakespeare
    tlite data prepare-shakespeare pg100.txt plays.txt
    tlite data download complete-works
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..atomic import atomic_write_text
from ..data.explore import review_length_stats, word_stats
from ..data.gutenberg import download_complete_works, prepare_complete_works
from ..data.shakespeare import text_stats
from ..data.sources import DATASETS, NO_PUBLIC_SOURCE, download, read_text_file
from ..data.tables import TEXT_COLUMNS, pick_column, read_table
from ..inspect.post_figures import write_character_frequencies, write_review_lengths
from ..numbers import json_text
from .common import command, show_help


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    dsub = p.add_subparsers(dest="data_command", metavar="ACTION")
    s = dsub.add_parser(
        "stats",
        help="lines, passages, words, characters of a text file; word statistics and character frequencies",
    )
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--plot", type=Path, metavar="DIR", help="also draw character_frequencies.png into DIR")
    s.set_defaults(func=run_stats)
    n = dsub.add_parser(
        "lengths",
        help="how long the texts of a table are (characters, words), post 000's figure: tlite data lengths train.jsonl",
    )
    n.add_argument(
        "file",
        help="a table of texts (.jsonl, .csv, .tsv, .json, .parquet, a datasets folder): its text column "
        "(text, review_body, ... or the longest strings)",
    )
    n.add_argument("--json", action="store_true", help="print one JSON object")
    n.add_argument("--plot", type=Path, metavar="DIR", help="also draw review_lengths.png into DIR")
    n.set_defaults(func=run_lengths)
    d = dsub.add_parser("download", help="fetch a public corpus into the cache (sha256-checked where a hash is known)")
    d.add_argument("dataset", choices=sorted(DATASETS) + sorted(NO_PUBLIC_SOURCE))
    d.add_argument("--to", type=Path, default=None, help="root folder instead of the user cache")
    d.set_defaults(func=run_download)
    g = dsub.add_parser(
        "prepare-shakespeare",
        help="keep only the plays' speeches and stage directions of a Gutenberg Complete Works (the current "
        "pg100.txt or the 1990s edition); prints what each play kept and every line's category",
    )
    g.add_argument("raw")
    g.add_argument("out")
    g.add_argument("--keep-non-ascii", action="store_true", help="keep letters such as œ, Æ, æ")
    g.set_defaults(func=run_prepare)
    p.set_defaults(func=show_help(p))


def _show(stats: dict, as_json: bool) -> None:
    if as_json:
        print(json_text(stats))
        return
    for key, value in stats.items():
        shown = ", ".join(f"{w} {n:,}" for w, n in value) if isinstance(value, list) else f"{value:,}"
        print(f"{key:>22}: {shown}")


def run_stats(args: argparse.Namespace) -> int:
    text = read_text_file(args.file)
    stats = {**text_stats(text), **word_stats(text)}
    _show(stats, args.json)
    if args.plot:
        print(f"wrote {write_character_frequencies(text, args.plot)}")
    return 0


def run_lengths(args: argparse.Namespace) -> int:
    table = read_table(args.file)  # texts only: a table without labels has lengths too
    texts = table.texts(pick_column(table, None, TEXT_COLUMNS, "text"))
    _show(review_length_stats(texts), args.json)
    if args.plot:
        print(f"wrote {write_review_lengths(texts, args.plot)}")
    return 0


def run_download(args: argparse.Namespace) -> int:
    if args.dataset == "complete-works":
        path, prepared = download_complete_works(args.to)
        print(prepared.table())
        print(prepared.report())
        print(path)
        return 0
    for path in download(args.dataset, args.to):
        print(path)
    return 0


def run_prepare(args: argparse.Namespace) -> int:
    prepared = prepare_complete_works(read_text_file(args.raw), ascii_only=not args.keep_non_ascii)
    atomic_write_text(args.out, prepared.text)
    stats = text_stats(prepared.text)
    print(prepared.table())
    print(prepared.report())
    print(
        f"wrote {args.out}: {stats['characters']:,} characters, {stats['passages']:,} passages, "
        f"{stats['lines']:,} lines, {stats['unique_characters']} unique characters"
    )
    return 0

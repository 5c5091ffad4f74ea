"""``tlite data``: corpus statistics, Shakespeare preparation, and downloads."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..atomic import atomic_write_text
from ..data.gutenberg import download_complete_works, prepare_complete_works
from ..data.shakespeare import text_stats
from ..data.sources import DATASETS, NO_PUBLIC_SOURCE, download, read_text_file


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(
        name,
        help="corpus statistics, preparation and downloads",
        description="Work with the corpora: statistics, Gutenberg preparation, downloads.",
        epilog="examples:\n  tlite data stats input.txt --json\n  tlite data download tinyshakespeare\n"
        "  tlite data prepare-shakespeare pg100.txt plays.txt\n  tlite data download complete-works",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dsub = p.add_subparsers(dest="data_command", metavar="ACTION")
    s = dsub.add_parser("stats", help="lines, passages, words, characters of a text file")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=run_stats)
    d = dsub.add_parser("download", help="fetch a public corpus into the cache (sha256-verified)")
    d.add_argument("dataset", choices=sorted(DATASETS) + sorted(NO_PUBLIC_SOURCE))
    d.add_argument("--to", type=Path, default=None, help="root folder instead of the user cache")
    d.set_defaults(func=run_download)
    g = dsub.add_parser(
        "prepare-shakespeare",
        help="keep only the plays' speeches of a Gutenberg Complete Works (the current pg100.txt or the 1990s edition)",
    )
    g.add_argument("raw")
    g.add_argument("out")
    g.add_argument("--keep-non-ascii", action="store_true", help="keep letters such as œ, Æ, æ")
    g.set_defaults(func=run_prepare)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def run_stats(args: argparse.Namespace) -> int:
    stats = text_stats(read_text_file(args.file))
    if args.json:
        print(json.dumps(stats))
    else:
        for key, value in stats.items():
            print(f"{key:>18}: {value:,}")
    return 0


def run_download(args: argparse.Namespace) -> int:
    if args.dataset == "complete-works":
        path, prepared = download_complete_works(args.to)
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
    print(prepared.report())
    print(
        f"wrote {args.out}: {stats['characters']:,} characters, {stats['passages']:,} passages, "
        f"{stats['lines']:,} lines, {stats['unique_characters']} unique characters"
    )
    return 0

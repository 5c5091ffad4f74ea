"""Project Gutenberg's Complete Works of Shakespeare -> the plays' speeches and stage directions.

Two editions are in circulation, and both become the same shape, one passage per speech::

    ROMEO.
    But soft, what light through yonder window breaks?
    It is the east, and Juliet is the sun.

* The current edition (``pg100.txt``) already looks like that: a speaker's name alone on its line
  (``ROMEO.``), then the speech; passages are separated by blank lines.
* The 1990s edition (``shaks12.txt``, also circulated as ``t8.shakespeare.txt``, and ``pg100.txt``
  as served until at least 2017) writes a speech as an indented line that starts with the name (``  ROMEO. But
  soft, ...``, in several plays a mixed-case abbreviation: ``  Ham. To be, or not to be-``) and
  continuation lines indented further; copyright notices (``<<THIS ELECTRONIC VERSION ...>>``) sit
  between and inside the works.

**Nothing vanishes unaccounted.** Every line between the Gutenberg ``*** START``/``*** END`` markers
gets exactly one category (``gutenberg_reader.CATEGORIES``: speech, speaker, direction, heading, cast,
contents, poem, notice, blank, unrecognised; ``gutenberg_reader`` reads the lines, ``gutenberg_lines``
knows what each kind looks like); ``Prepared.categories`` counts them and
``Prepared.per_play`` counts each play's speeches and characters. A play with no speeches or far
fewer than the others (or more stage-direction lines than speech lines), and any unrecognised line
that holds letters, is a warning naming the play and a line number; keeping less than ``min_kept``
of the text is an error.

**Stage directions are kept**, as the post's preparation keeps them (its character list has ``[``,
``]`` and ``_`` from ``[_Exit._]``): they tell who enters, leaves and fights, which the speeches
assume. Each is written in brackets (``Enter Ghost.`` -> ``[Enter Ghost.]``), so that a direction can
never read like a speaker (``Exit.`` would look like ``Ham.``); a direction inside a speech stays in
that speech, one between speeches is a passage of its own.

Everything else goes. Post 004 names what it removes: the Project Gutenberg introduction and
conclusion, the table of contents, the sonnets and the preambles ("these list the acts and scenes in
each play"), "and so on". What this module removes beyond those is its own choice, not the post's: the
act and scene headings inside the plays, the cast lists, the longer poems (not only the sonnets) and
the 1990s edition's copyright notices; and it writes that edition's stage directions in brackets. As
the post does, ``&c.`` becomes ``etc.``, other ``&`` are dropped and (with ``ascii_only``) the few
non-ASCII letters (œ, Æ, æ, ...) too, keeping the dashes and curly quotes (—‘’“”). So the result is
not the post's text: the post's has 4,963,197 characters in 38,409 passages (the current edition),
this module's of the 1990s edition 4,692,307.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import atomic_write_text
from ..errors import DataError, warn
from .gutenberg_reader import CATEGORIES, KEPT, read_works
from .sources import download, read_text_file

_MARKER = r"^\*\*\* ?{} OF (THE|THIS) PROJECT GUTENBERG.*$"
KEEP_NON_ASCII = "—‘’“”"
FAR_BELOW = 0.25  # a play with fewer speeches than this fraction of the median play's is reported


@dataclass(frozen=True)
class PlayCount:
    """One play of the file: its title as the file gives it, where it starts, and what was kept."""

    title: str
    line: int  # the title's line number in the file (1-based)
    speeches: int  # speakers' turns
    characters: int  # of its passages in the prepared text
    speech_lines: int = 0  # lines of the file read as speech
    direction_lines: int = 0  # and as stage directions (more of those than of speech: a layout not understood)


@dataclass(frozen=True)
class Prepared:
    """The prepared text and the account of every line it came from."""

    text: str
    edition: str  # "current" (speaker alone on its line) or "1990s" (speaker and speech on one line)
    source_characters: int  # between the Gutenberg markers
    passages: int  # speeches and the directions between them
    plays: int  # plays that contributed speeches
    per_play: tuple[PlayCount, ...] = ()
    categories: dict[str, int] = field(default_factory=dict)  # lines between the markers, by category
    category_characters: dict[str, int] = field(default_factory=dict)  # their characters (newlines not counted)
    unrecognised: tuple[int, ...] = ()  # line numbers of unrecognised lines that hold letters
    warnings: tuple[str, ...] = ()  # what was reported with ``warn``

    @property
    def kept_fraction(self) -> float:
        return len(self.text) / max(self.source_characters, 1)

    @property
    def lines(self) -> int:
        return sum(self.categories.values())

    @property
    def speeches(self) -> int:
        return sum(p.speeches for p in self.per_play)

    def report(self) -> str:
        """One summary line."""
        dropped = self.source_characters - len(self.text)
        return (
            f"{self.edition} edition: kept {len(self.text):,} characters in {self.passages:,} passages "
            f"({self.speeches:,} speeches) from {self.plays} plays; dropped {dropped:,} characters "
            f"({1 - self.kept_fraction:.0%}: contents, sonnets and poems, headings, cast lists, notices)"
        )

    def table(self) -> str:
        """The per-play table (title, line, speeches, characters), then lines and characters by category."""
        width = max([len(p.title) for p in self.per_play] + [4])
        rows = [f"{'play':<{width}}  {'line':>7}  {'speeches':>8}  {'characters':>10}"]
        rows += [f"{p.title:<{width}}  {p.line:>7}  {p.speeches:>8,}  {p.characters:>10,}" for p in self.per_play]
        rows += ["", f"{'category':<12}  {'lines':>7}  {'characters':>10}"]
        rows += [
            f"{c:<12}  {self.categories.get(c, 0):>7,}  {self.category_characters.get(c, 0):>10,}" for c in CATEGORIES
        ]
        rows.append(f"{'all':<12}  {self.lines:>7,}  {sum(self.category_characters.values()):>10,}")
        return "\n".join(rows)


def _body(raw: str) -> tuple[str, int]:
    """The text between the markers and the file line number of its first line."""
    text = raw.replace("\r\n", "\n").replace("\ufeff", "")
    start = re.search(_MARKER.format("START"), text, re.M)
    end = re.search(_MARKER.format("END"), text, re.M)
    first = start.end() if start else 0
    last = end.start() if end and (not start or end.start() > start.end()) else len(text)
    return text[first:last], text.count("\n", 0, first) + 1


def between_markers(raw: str) -> str:
    """The text between Gutenberg's ``*** START OF ...`` and ``*** END OF ...`` lines (all of it if absent)."""
    return _body(raw)[0]


def _clean(passage: str, ascii_only: bool) -> str:
    """``&c.`` -> ``etc.``, other ``&`` dropped, and (``ascii_only``) the non-ASCII letters, as the post did."""
    text = re.sub(r" ?&", "", passage.replace("&c.", "etc.").replace("&C.", "etc."))
    text = "".join(ch for ch in text if ch.isascii() or ch in KEEP_NON_ASCII) if ascii_only else text
    return "\n".join(line for line in text.split("\n") if line.strip())


def _problems(
    per_play: list[PlayCount], unrecognised: list[tuple[str, list[int]]], lines: list[str], first: int
) -> list[str]:
    """Warnings: plays without speeches or far below the median, and unrecognised lines of text."""
    out = []
    median = statistics.median([p.speeches for p in per_play]) if len(per_play) >= 3 else 0
    for p in per_play:
        if p.speeches == 0:
            out.append(f"no speeches recognised in the play '{p.title}' (line {p.line}); its text is not in the output")
        elif p.speeches < FAR_BELOW * median:
            out.append(
                f"only {p.speeches} speeches recognised in the play '{p.title}' (line {p.line}), against "
                f"{median:g} in the median play; its speaker lines may be in a form this reader does not know"
            )
        elif p.direction_lines > p.speech_lines:
            out.append(
                f"the play '{p.title}' (line {p.line}) has more stage-direction lines ({p.direction_lines}) than "
                f"speech lines ({p.speech_lines}); its speeches may be laid out in a way this reader does not know"
            )
    for where, found in unrecognised:
        shown = ", ".join(str(n) for n in found[:5]) + (", ..." if len(found) > 5 else "")
        out.append(
            f"{len(found)} unrecognised line(s) of text in {where} were dropped (line {shown}; first: "
            f"{lines[found[0] - first].strip()[:60]!r})"
        )
    return out


def prepare_complete_works(raw: str, *, ascii_only: bool = True, min_kept: float = 0.5) -> Prepared:
    """Keep only the plays' speeches and stage directions of either edition (see the module docstring).

    Warns (``TliteWarning``) about plays without speeches or with far fewer than the others, and
    about unrecognised lines of text. Raises ``DataError`` when less than ``min_kept`` of the text
    between the Gutenberg markers survives: the file is then not a Complete Works this function
    understands, and a nearly empty training text would be worse than a clear error.
    """
    body, first = _body(raw)
    lines = body.split("\n")[:-1] if body.endswith("\n") else body.split("\n")
    reading = read_works(lines)
    counts, chars = dict.fromkeys(CATEGORIES, 0), dict.fromkeys(CATEGORIES, 0)
    work_of = [-1] * len(lines)  # index of the work that holds each line; -1: the front matter
    for k, work in enumerate(reading.works):
        work_of[work.start : work.end] = [k] * (work.end - work.start)
    found: dict[int, list[int]] = {}  # per work: file line numbers of unrecognised lines of text
    per_work = [dict.fromkeys(CATEGORIES, 0) for _ in reading.works]
    for i, (line, category) in enumerate(zip(lines, reading.categories)):
        counts[category] += 1
        chars[category] += len(line)
        if work_of[i] >= 0:
            per_work[work_of[i]][category] += 1
        if category == "unrecognised" and any(ch.isalpha() for ch in line):
            found.setdefault(work_of[i], []).append(first + i)
    unrecognised = [(f"'{reading.works[k].title}'" if k >= 0 else "the front matter", n) for k, n in found.items()]
    assert sum(counts.values()) == len(lines), "every line has exactly one category"
    per_play, kept = [], []
    for work, passages, speeches, n in zip(reading.works, reading.passages, reading.speeches, per_work):
        if work.is_play:
            cleaned = [c for p in passages if (c := _clean(p, ascii_only))]
            characters = len("\n\n".join(cleaned))
            per_play.append(
                PlayCount(work.title, first + work.title_line, speeches, characters, n["speech"], n["direction"])
            )
            kept += cleaned
    text = "\n\n".join(kept) + "\n" if kept else ""
    problems = _problems(per_play, unrecognised, lines, first)
    prepared = Prepared(
        text,
        reading.edition,
        len(body),
        len(kept),
        sum(p.speeches > 0 for p in per_play),
        tuple(per_play),
        counts,
        chars,
        tuple(n for _, numbers in unrecognised for n in numbers),
        tuple(problems),
    )
    for message in problems:  # before a refusal too: they say where the text went
        warn(message)
    if prepared.kept_fraction < min_kept:
        raise DataError(
            f"only {prepared.kept_fraction:.0%} of the text between the Gutenberg markers are play "
            f"speeches ({prepared.passages} passages found); is this Project Gutenberg's Complete Works of "
            "Shakespeare (pg100.txt or the 1990s shaks12.txt)? Nothing was written"
        )
    return prepared


def download_complete_works(root: Path | None = None) -> tuple[Path, Prepared]:
    """Fetch ``pg100.txt`` into ``root/complete-works`` (default: the user cache) and write the
    prepared ``plays.txt`` beside it; returns its path and the preparation report."""
    raw_path = download("complete-works", root)[0]
    prepared = prepare_complete_works(read_text_file(raw_path))
    out = raw_path.with_name("plays.txt")
    atomic_write_text(out, prepared.text)
    return out, prepared


__all__ = ["KEPT", "PlayCount", "Prepared", "between_markers", "download_complete_works", "prepare_complete_works"]

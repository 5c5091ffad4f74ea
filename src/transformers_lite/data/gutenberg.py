"""Project Gutenberg's Complete Works of Shakespeare -> the plays' speeches, as seed 004 trained on.

Two editions are in circulation, and both become the same shape, one speech per passage::

    ROMEO.
    But soft, what light through yonder window breaks?
    It is the east, and Juliet is the sun.

* The current edition (``pg100.txt``) already looks like that: a speaker's name alone on its line
  (``ROMEO.``), then the speech; passages are separated by blank lines.
* The 1990s edition (``shaks12.txt``, also circulated as ``t8.shakespeare.txt``) writes a speech as
  an indented line that starts with the name, the speech on the same line (``  ROMEO. But soft,
  ...``), and continuation lines indented further; stage directions stand in brackets or on lines
  of their own (``Enter ...``, ``Exeunt``); copyright notices (``<<THIS ELECTRONIC VERSION ...>>``)
  sit between the works.

Everything else goes: the Gutenberg header and licence (outside the ``*** START``/``*** END``
markers), the table of contents, the sonnets and poems, act and scene headings, cast lists and
stage-direction lines. As the seed does, ``&c.`` becomes ``etc.``, other ``&`` are dropped and (with
``ascii_only``) the few non-ASCII letters (œ, Æ, æ, ...) too, keeping the dashes and curly quotes
(—‘’“”).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..atomic import atomic_write_text
from ..errors import DataError
from .sources import download, read_text_file

_SPEAKER = r"[A-Z][A-Z0-9 '’,&\-]*[A-Z]\."  # "LYSANDER." or "FIRST CITIZEN."
_NEW_SPEAKER = re.compile(rf"^{_SPEAKER}$")
_OLD_SPEECH = re.compile(rf"^ {{1,3}}({_SPEAKER}) +(\S.*)$")  # "  ROMEO. But soft, what light ..."
_HEADING = re.compile(r"^(ACT|SCENE|PROLOGUE|EPILOGUE|INDUCTION|THE END|Contents|CONTENTS|Dramatis|DRAMATIS)\b")
_DIRECTION = re.compile(r"^\s*\[[^\]]*\]\s*$")  # a whole line in brackets: "[Exit]"
_MARKER = r"^\*\*\* ?{} OF (THE|THIS) PROJECT GUTENBERG.*$"
_NOTICE = re.compile(r"<<THIS ELECTRONIC VERSION.*?>>", re.S)
_PLAY = re.compile(r"^ACT I(?![IVX])\b", re.M)  # each play has one "ACT I" heading at the start of a line
KEEP_NON_ASCII = "—‘’“”"


@dataclass(frozen=True)
class Prepared:
    """The prepared text and what was kept and dropped."""

    text: str
    edition: str  # "current" (speaker alone on its line) or "1990s" (speaker and speech on one line)
    source_characters: int  # between the Gutenberg markers
    passages: int
    plays: int  # plays (from one "ACT I" heading to the next) that contributed speeches

    @property
    def kept_fraction(self) -> float:
        return len(self.text) / max(self.source_characters, 1)

    def report(self) -> str:
        dropped = self.source_characters - len(self.text)
        return (
            f"{self.edition} edition: kept {len(self.text):,} characters in {self.passages:,} speeches from "
            f"{self.plays} plays; dropped {dropped:,} characters ({1 - self.kept_fraction:.0%}: contents, "
            "sonnets and poems, headings, cast lists, stage directions, copyright notices)"
        )


def between_markers(raw: str) -> str:
    """The text between Gutenberg's ``*** START OF ...`` and ``*** END OF ...`` lines (all of it if absent)."""
    text = raw.replace("\r\n", "\n").replace("\ufeff", "")
    start = re.search(_MARKER.format("START"), text, re.M)
    end = re.search(_MARKER.format("END"), text, re.M)
    return text[
        start.end() if start else 0 : end.start() if end and (not start or end.start() > start.end()) else len(text)
    ]


def _new_edition_speeches(text: str) -> list[str]:
    """Passages that open with a speaker line (``LYSANDER.``) followed by speech."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in block.strip("\n").split("\n") if ln.strip()]
        if len(lines) < 2 or _HEADING.match(lines[0]) or not _NEW_SPEAKER.match(lines[0]):
            continue
        if not any(c.islower() for c in lines[1]):
            continue  # a name followed by more capitals: a cast list or heading, not speech
        out.append("\n".join(lines))
    return out


def _old_edition_speeches(text: str) -> list[str]:
    """Indented ``  NAME. speech`` lines and their further-indented continuations."""
    out: list[str] = []
    speech: list[str] | None = None
    for line in text.split("\n"):
        start = _OLD_SPEECH.match(line)
        if start:
            speech = [start.group(1), start.group(2).strip()]
            out.append(speech)  # type: ignore[arg-type]
        elif speech is not None and line.startswith("    ") and len(line) - len(line.lstrip()) < 10:
            if line.strip() and not _DIRECTION.match(line):  # deeper indents are right-aligned directions
                speech.append(line.strip())
        else:
            speech = None
    return ["\n".join(s) for s in out if any(c.islower() for c in " ".join(s[1:]))]  # type: ignore[arg-type]


def prepare_complete_works(raw: str, *, ascii_only: bool = True, min_kept: float = 0.5) -> Prepared:
    """Keep only the plays' speeches of either edition (see the module docstring).

    Raises ``DataError`` when less than ``min_kept`` of the text between the Gutenberg markers
    survives: the file is then not a Complete Works this function understands, and a nearly empty
    training text would be worse than a clear error.
    """
    body = _NOTICE.sub("", between_markers(raw))
    old = sum(1 for ln in body.split("\n") if _OLD_SPEECH.match(ln))
    new = sum(1 for ln in body.split("\n") if _NEW_SPEAKER.match(ln.strip()) and ln.strip() == ln)
    edition = "1990s" if old > new else "current"
    speeches_of = _old_edition_speeches if edition == "1990s" else _new_edition_speeches
    passages, plays = [], 0
    for i, part in enumerate(re.split(_PLAY, body)):  # part 0: what comes before the first play
        found = speeches_of(part)
        plays += bool(found) and i > 0
        passages += found
    text = ("\n\n".join(passages) + "\n").replace("&c.", "etc.").replace("&", "") if passages else ""
    if ascii_only:
        text = "".join(ch for ch in text if ch.isascii() or ch in KEEP_NON_ASCII)
    prepared = Prepared(text, edition, len(body), len(passages), plays)
    if prepared.kept_fraction < min_kept:
        raise DataError(
            f"only {prepared.kept_fraction:.0%} of the text between the Gutenberg markers are play "
            f"speeches ({prepared.passages} found); is this Project Gutenberg's Complete Works of "
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

"""What one line of a Gutenberg Complete Works is, and where its works begin.

Pure functions of a line (or of a line and its neighbours) for ``gutenberg_reader``: speaker forms,
stage directions, headings, the parts of a play's preamble, and ``find_works``, which cuts the file
into works. Speaker forms recognised, in any case, in both editions::

    HAMLET.                         the name alone on its line, the speech on the lines after it
    Ham.                            (current edition; the 1998 single-play texts abbreviate;
    QUINCE                           a name in capitals may lack its period)
      Ham. To be, or not to be-     1990s edition: name and speech on one indented line,
        that is the question:       continuation lines indented further
      MRS. PAGE. / Lady M. / 1. Serv. / ROSENCRANTZ and GUILDENSTERN. / Alb., Corn. / NESTOR.Who
      MALCOLM The worthy ...        a name the play already used, its period missing
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# an act or scene number: "IV", "1", "Second", "FIFTH"; "Il" is the 1990s text's misprint of "II"
_NUMBER = r"(?:[IVXLC][IVXLCl]*|\d+|[A-Z][a-z]+|FIRST|SECOND|THIRD|FOURTH|FIFTH)\b"
_ACT = re.compile(
    rf"^(?:(?:ACT|Act|SCENE|Scene)\s+{_NUMBER}|(?:Actus|Scena|Scoena|Scaena)\s+\w+|INDUCTION\b|Induction\b)"
)
_BARE = re.compile(r"^(?:(?:ACT|Act|SCENE|Scene|INDUCTION|Induction)\.?\s*(?:[IVXLC][IVXLCl]*|\d+)?\.?\s*)+$")
_SPOKEN = re.compile(r"^\[?(?:THE\s+)?(?:PROLOGUE|EPILOGUE|CHORUS|SONG|Prologue|Epilogue|Chorus)\.?\]?$")
_OTHER = re.compile(r"^(?:SCENE\s*[.:\-].*|SCENE|Spoken by .*|\w+\|\w+|SC_\d+)$")  # setting; file artefacts
_END = re.compile(r"^(?:THE END|FINIS)\b")
_CAST = re.compile(r"^(?:dramatis person(?:ae|æ)|persons represented|characters in the play)\.?:?$", re.I)
_CONTENTS = re.compile(r"^(?:table of )?contents\.?$", re.I)
_YEAR = re.compile(r"^1[56]\d\d$")
_BOILERPLATE = re.compile(r"gutenberg|etext|ebook|copyright|world library", re.I)
_BYLINE = re.compile(r"^by william shakespeare$", re.I)
# "  Ham. To be", "  1. Serv. Where's", "  Alb., Corn. Dear sir", "  NESTOR.Who": indent, name, speech
_INLINE = re.compile(r"^( {0,3})((?:\d\.\s*)?[^\s.](?:[^.]|\.,){0,38}?)\.\.?(?: +|(?=[A-Z‘'\"]))(\S.*)$")
_FOLLOWS = re.compile(r"^([A-Z][^.]{0,20}?)\. +(\S.*)$")  # the "PAGE" of "MRS. PAGE. ..."
_CAPITALS = re.compile(r"^( {0,3})[A-Z][A-Z'\- ]*[A-Z] +\S")  # "MALCOLM The worthy ..."
# a known name with a slip of the type: "FIRST MURDERER-How now", "Hor [aside to Hamlet] Is't not"
_SLIP = re.compile(r"^( {0,3})(\S[^\[\-]{0,39}?)(?:-(?=[A-Z‘'\"])| +(?=\[))(.*\S)$")
_CAST_LINE = re.compile(r"^\s*[A-Z][A-Z'\-]+\b")  # "GOWER, as Chorus.", "DUKE of BURGUNDY.": a cast list
_ASIDE = re.compile(r"(?<=\S)\s*(\[[^\]]*\]?)\s*$")  # "[To TRANIO.]" after a name
_ENTERS = re.compile(r"^\[?_?(?:Enter|Re-enter)\s+([A-Z][A-Za-z]+)\.?_?\]?$")  # "Enter Gower."
_ENTRANCE = re.compile(r"\b(?:Enter|enter|enters|Exit|Exeunt|Alarums?|Flourish)\b")
_CONNECTORS = frozenset({"and", "&", "&c", "of", "the", "de", "du", "la", "le", "etc"})
_TITLES = frozenset({"MRS", "MR", "ST", "DR", "Mrs", "Mr", "St", "Dr"})
_DIRECTION_WORDS = frozenset(
    "Enter Re-enter Reenter Exit Exeunt Manet Manent Flourish Alarum Alarums Sennet Sound Sounds Trumpets Music "
    "Thunder Hautboys Retreat Retires Excursions Drum Drums March Cornets Shout Shouts Knocking Tucket Noise "
    "Dies".split()
)


def indent(line: str) -> int:
    """Leading spaces: where a 1990s line stands (speaker, continuation, centred or right-aligned)."""
    return len(line) - len(line.lstrip(" "))


def is_name(name: str) -> bool:
    """A speaker's name: 1-6 words, each capitalised (or a number, or ``and``/``of``/``&``...)."""
    words = name.replace(",", " ").replace(".", ". ").split()
    return (
        0 < len(words) <= 6
        and len(name) <= 40
        and (words[0][0].isupper() or words[0][0].isdigit())
        and all(w[0].isupper() or w[0].isdigit() or w.rstrip(".").lower() in _CONNECTORS for w in words)
    )


def is_direction(text: str) -> bool:
    """A stripped line that opens a stage direction: bracketed or starting with ``Enter``, ``Exit``..."""
    words = text.lstrip("<(").split(maxsplit=1)
    return text.startswith("[") or bool(words) and words[0].rstrip(".,;:") in _DIRECTION_WORDS


def is_bracketed(text: str) -> bool:
    """A whole line in brackets (``[Aside]``, ``[_Exit._]``): a direction even inside a speech."""
    return text.startswith("[") and text.rstrip(".").endswith("]")


def heading_kind(text: str) -> str | None:
    """``"act"`` (act, scene, induction: its place may follow), ``"spoken"`` (prologue, epilogue,
    chorus, song: spoken as a speech), ``"end"`` (``THE END``), ``"other"`` (setting) or ``None``."""
    if _ACT.match(text):
        return "act"
    if _SPOKEN.match(text):
        return "spoken"
    if _END.match(text):
        return "end"
    return "other" if _OTHER.match(text) else None


def is_bare(heading: str) -> bool:
    """An act or scene heading without its place (``ACT I. SCENE I.``): the place is on the next line."""
    return bool(_BARE.match(heading))


def is_title_page(text: str) -> bool:
    """A year (``1604``) or ``by William Shakespeare``: the lines around a 1990s title."""
    return bool(_YEAR.match(text) or _BYLINE.match(text))


def inline_speech(line: str, known: frozenset[str] = frozenset()) -> tuple[int, str, str] | None:
    """``(indent, name, speech)`` of a 1990s ``  NAME. speech`` line, or ``None``.

    A name holds periods only after a title (``MRS. PAGE``), an initial (``M. Wife``) or between two
    names in capitals (``VARRO. CLAUDIO``), so ``ALL. Amen.`` stays ``ALL`` saying ``Amen.``. A name
    in ``known`` may stand without its period (``MALCOLM The worthy Thane of Ross.``), before a dash
    (``FIRST MURDERER-How now``) or before a bracket (``Hor [aside to Hamlet] Is't not``)."""
    m = _INLINE.match(line)
    if not m or not is_name(m.group(2)) or heading_kind(m.group(2)) not in (None, "spoken") or is_direction(m.group(2)):
        if (slip := _SLIP.match(line)) and slip.group(2) in known:
            return len(slip.group(1)), slip.group(2), slip.group(3)
        words = line.split()
        capitals = _CAPITALS.match(line)
        k = next((k for k in (3, 2, 1) if capitals and " ".join(words[:k]) in known and len(words) > k), 0)
        return (indent(line), " ".join(words[:k]), line.split(None, k)[k]) if k else None
    name, rest = " ".join(m.group(2).split()), m.group(3)
    if rest.split()[0] in ("Enter", "Exit", "Exeunt", "Re-enter"):  # "Dead March. Enter the funeral ..."
        return None
    while (more := _FOLLOWS.match(rest)) and is_name(more.group(1)):
        last, following = name.split()[-1], more.group(1)
        if not (last in _TITLES or len(last) == 1 or (last.isupper() and following.isupper() and len(following) > 1)):
            break
        name, rest = f"{name}. {following}", more.group(2)
    return len(m.group(1)), name, rest


def alone_speaker(lines: list[str], i: int) -> str | None:
    """The name of a speaker alone on line ``i`` when a line follows it: ``HAMLET.``, ``Ham.``,
    ``QUINCE``, ``BAPTISTA.  [To TRANIO.]`` (``aside`` gives the direction)."""
    text = _ASIDE.sub("", lines[i]).strip()
    if not text or indent(lines[i]) > 3 or is_direction(text) or heading_kind(text) == "act":
        return None
    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
    name = text[:-1] if text.endswith(".") else text if text.isupper() and len(text) > 1 else ""
    return name if nxt and heading_kind(nxt) in (None, "spoken") and is_name(name) else None


def aside(line: str) -> str | None:
    """The bracketed direction after a speaker's name on its line (``BAPTISTA.  [To TRANIO.]``)."""
    m = _ASIDE.search(line)
    return m.group(1) if m else None


def opens_speech(name: str | None, speech: str) -> bool:
    """A play's first speech: a name in capitals (or one abbreviated word), then words in lower case
    that do not start with a word in capitals as cast lists do (``DIANA.`` over ``GOWER, as Chorus.``)."""
    words = name.split() if name else []
    return (
        len(name or "") > 1
        and any(c.islower() for c in speech)
        and not _CAST_LINE.match(speech)
        and (len(words) == 1 or all(w.upper() == w or w in _CONNECTORS for w in words))
    )


def entered_alone(direction: str) -> str | None:
    """``GOWER`` for ``Enter Gower.``: who speaks the unnamed speech that follows."""
    m = _ENTERS.match(direction)
    return m.group(1).upper() if m else None


def is_boilerplate(text: str) -> bool:
    """A line about the file rather than the play (``End of this Etext of The Complete Works ...``)."""
    return bool(_BOILERPLATE.search(text))


def is_part_header(text: str) -> bool:
    """``Contents`` or ``Dramatis Personæ``: a play's preamble, never its body."""
    return bool(_CONTENTS.match(text) or _CAST.match(text))


def mentions_entrance(text: str) -> bool:
    """A line of a stage direction that does not open with its verb (``Dead March. Enter the funeral``)."""
    return bool(_ENTRANCE.search(text))


def preamble_part(text: str, part: str | None) -> tuple[str, str | None]:
    """``(category, part)`` of a non-blank line between a play's title and its first act; ``part`` is
    the contents, the cast list, or the ``SCENE:`` whose place is on this line."""
    if (part == "contents" and not _CAST.match(text)) or _CONTENTS.match(text):
        return "contents", "contents"
    if _CAST.match(text):
        return "heading", "cast"
    if heading_kind(text) or part == "setting":  # after an act heading nothing is a cast list any more
        setting = re.fullmatch(r"SCENE\s*[.:\-]*", text)
        return "heading", "setting" if setting else "cast" if part and heading_kind(text) != "act" else None
    return (part, part) if part else ("unrecognised", None)


def notices(lines: list[str]) -> list[bool]:
    """Lines inside the World Library's ``<<THIS ELECTRONIC VERSION ... MEMBERSHIP.>>`` blocks."""
    out, inside = [], False
    for line in lines:
        inside = inside or line.lstrip().startswith("<<")
        out.append(inside)
        inside = inside and ">>" not in line
    return out


def near(lines: list[str], i: int, step: int) -> int | None:
    """The nearest non-blank line before (``step=-1``) or after (``step=1``) line ``i``, within 6 lines."""
    return next((j for j in range(i + step, i + 7 * step, step) if 0 <= j < len(lines) and lines[j].strip()), None)


@dataclass(frozen=True)
class Work:
    """One work of the file: its title as the file gives it and the lines it spans."""

    title: str
    start: int  # index of its first line (the year before the title, or the title)
    title_line: int
    end: int  # one past its last line
    is_play: bool  # it has acts


def _is(pattern: re.Pattern[str], lines: list[str], j: int | None) -> bool:
    return j is not None and bool(pattern.match(lines[j].strip()))


def find_works(lines: list[str], notice: list[bool]) -> tuple[list[Work], range]:
    """The works, and the range of the table of contents at the top (empty if there is none).

    A title is a line after a year (``1604``) or before ``by William Shakespeare`` (both editions), or
    an unindented line in capitals after a blank line that holds a title of the top table of contents
    (current edition: ``THE LIFE AND DEATH OF KING RICHARD THE SECOND`` for ``KING RICHARD THE SECOND``;
    not a cast line that repeats it under ``Dramatis Personæ``). A file without titles is one work."""
    marked = [
        i
        for i, line in enumerate(lines)
        if line.strip()
        and not notice[i]
        and "complete works" not in line.lower()
        and not is_title_page(line.strip())
        and (_is(_YEAR, lines, near(lines, i, -1)) or _is(_BYLINE, lines, near(lines, i, 1)))
    ]
    first = next((i for i, line in enumerate(lines) if _CONTENTS.match(line.strip())), None)
    contents, listed = range(0), set()
    if first is not None and (not marked or first < marked[0]):  # its entries are indented
        end = next((j for j in range(first + 1, len(lines)) if lines[j][:1].strip()), len(lines))
        contents, listed = range(first, end), {ln.strip() for ln in lines[first + 1 : end] if ln.strip()}
    titled = [
        i
        for i in range(max(contents.stop, 1), len(lines))
        if lines[i][:1].strip()
        and lines[i].upper() == lines[i]
        and any(lines[i] == e or lines[i].endswith(" " + e) for e in listed)
        and not lines[i - 1].strip()
        and not _is(_CAST, lines, near(lines, i, -1))
    ]
    titles = sorted({*marked, *titled}) or [next((i for i, ln in enumerate(lines) if ln.strip()), 0)]
    starts = [j if (j := near(lines, i, -1)) is not None and _is(_YEAR, lines, j) else i for i in titles]
    ends = [*starts[1:], len(lines)]
    works = [
        Work(lines[i].strip(), s, i, e, any(_ACT.match(ln.strip()) for ln in lines[i:e]))
        for s, i, e in zip(starts, titles, ends)
    ]
    return (works if lines else []), contents

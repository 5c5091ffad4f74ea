"""Every line of a Gutenberg Complete Works in exactly one category, and the passages kept from it.

``read_works(lines)`` is the parser behind ``gutenberg.prepare_complete_works``. It cuts the file
into works (``gutenberg_lines.find_works``), tells plays (they have acts) from poems, and reads each
play in two parts: the preamble (title, contents, cast list, setting) up to the act, scene, prologue
or induction heading before its first speech, then the body, line by line, with a small state: whose
speech is open, where its speaker stands (1990s edition), what the current block is (current edition).

Categories (``CATEGORIES``), one per line:

* ``speech``: a line of what a character says (1990s lines that start with the name too);
* ``speaker``: a speaker's name alone on its line;
* ``direction``: a stage direction (bracketed, ``Enter ...``, ``Exit``; in the 1990s edition any
  line set off from the speeches: unindented, centred or right-aligned);
* ``heading``: titles, years, ``by William Shakespeare``, acts, scenes and their places, ``THE END``;
* ``cast``, ``contents``: the cast lists and tables of contents;
* ``poem``: every line of a work without acts (the sonnets and poems);
* ``notice``: Gutenberg and World Library notices, the front matter (before the first title), and
  after a work's ``THE END`` the lines about the file (``End of this Etext ...``);
* ``blank``; ``unrecognised``: anything else (``prepare_complete_works`` warns about those with letters).

``speech``, ``speaker`` and ``direction`` lines are kept (``KEPT``). A passage is a speech (``NAME.``
then its lines, each stripped) or a stage direction between speeches; a direction inside a speech
stays in it. A speech that goes on after a direction opens a new passage under the same name. A group
of direction lines is written in brackets unless the file bracketed it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .gutenberg_lines import (
    Work,
    alone_speaker,
    aside,
    entered_alone,
    find_works,
    heading_kind,
    indent,
    inline_speech,
    is_bare,
    is_boilerplate,
    is_bracketed,
    is_direction,
    is_part_header,
    is_title_page,
    mentions_entrance,
    notices,
    opens_speech,
    preamble_part,
)

CATEGORIES = (
    "speech",
    "speaker",
    "direction",
    "heading",
    "cast",
    "contents",
    "poem",
    "notice",
    "blank",
    "unrecognised",
)
KEPT = frozenset({"speech", "speaker", "direction"})
_NEAR = 8  # non-blank lines from the heading that opens a play's body to its first speech


@dataclass
class Reading:
    """What ``read_works`` found: a category per line and, per work, its kept passages."""

    edition: str  # "current" (speaker alone on its line) or "1990s" (speaker and speech on one line)
    categories: list[str]
    works: list[Work]
    passages: list[list[str]] = field(default_factory=list)  # per work
    speeches: list[int] = field(default_factory=list)  # per work: speakers' turns


class _PlayReader:
    """Reads one play into ``categories`` and passages: the preamble, then the body line by line.

    ``inline`` is the 1990s edition (``  NAME. speech`` at the play's usual indent, ``margin``);
    otherwise speakers stand alone on their lines and a blank line ends a passage."""

    def __init__(self, lines: list[str], notice: list[bool], categories: list[str], inline: bool, work: Work) -> None:
        self.lines, self.notice, self.categories, self.inline, self.work = lines, notice, categories, inline, work
        said = [s for ln in lines[work.start : work.end] if (s := inline_speech(ln))] if inline else []
        self.margin = Counter(s[0] for s in said).most_common(1)[0][0] if said else 2  # the speakers' indent
        self.known = frozenset(s[1] for s in said if s[0] == self.margin)  # the play's speakers
        self.passages: list[list[tuple[str, str, bool]]] = []  # (category, text, opens a direction group)
        self.open: str | None = None  # "speech" or "direction": the passage that a line may join
        self.open_speaker: str | None = None
        self.speaker: str | None = None  # whose speech a continuation line belongs to
        self.speaker_indent = 0
        self.block: str | None = None  # current edition: what the lines since the last blank line are
        self.place = False  # the next line may be the place of the scene just headed
        self.entered: str | None = None  # who entered alone ("Enter Gower."): the speaker of an unnamed speech
        self.ended = False  # after "THE END": notices only
        self.speeches = 0  # speeches (a speaker's turn, however many passages)
        self.turn: str | None = None  # whose turn the last speech was

    def read(self) -> tuple[list[str], int]:
        """Fills in the play's categories; returns its passages and how many are speeches."""
        body, part = self._body_start(), None
        for i in range(self.work.start, body):
            text = self.lines[i].strip()
            if not text or self.notice[i] or i == self.work.title_line or is_title_page(text):
                self.categories[i] = "heading" if text and not self.notice[i] else "notice" if text else "blank"
            else:
                self.categories[i], part = preamble_part(text, part)
        for i in range(body, self.work.end):
            self.categories[i] = self._body(i)
        return [_render(p) for p in self.passages], self.speeches

    def _first_speech(self) -> int | None:
        """The line of the play's first speech (see ``opens_speech``), or of ``Enter Gower.`` when an
        unnamed speech of more than three lines follows it (Gower's and Gloster's openings)."""
        lines, work = self.lines, self.work
        said = Counter(ln.strip() for ln in lines[work.start : work.end])  # a name without its period must recur
        for i in range(work.title_line + 1, work.end - 1):
            text = lines[i].strip()
            if self.notice[i]:
                continue
            if self.inline and (found := inline_speech(lines[i])) and opens_speech(found[1], found[2]):
                return i
            block_start = not lines[i - 1].strip() and (text.endswith(".") or said[text] + said[f"{text}."] > 2)
            if not self.inline and block_start and opens_speech(alone_speaker(lines, i), lines[i + 1]):
                return i
            if not self.inline and entered_alone(text):
                after = [j for j in range(i + 2, min(i + 12, len(lines) - 3)) if not lines[j - 1].strip()]
                if any(all(ln.strip() for ln in lines[j : j + 4]) and not alone_speaker(lines, j) for j in after):
                    return i
        return None

    def _body_start(self) -> int:
        """The farthest act, scene or prologue heading or stage direction in the few lines before the
        first speech (the speech itself if none), not past the cast list or the setting (``SCENE: ...``)."""
        lines, work, first = self.lines, self.work, self._first_speech()
        if first is None:
            return work.end
        start, seen = first, 0
        for j in range(first - 1, work.title_line, -1):
            text = lines[j].strip()
            if not text or self.notice[j]:
                continue
            if is_part_header(text) or heading_kind(text) in ("other", "end") or seen == _NEAR:
                break
            seen += 1
            start = j if heading_kind(text) in ("act", "spoken") or is_direction(text) else start
        return start

    def _body(self, i: int) -> str:
        text = self.lines[i].strip()
        if not text:
            self.block = None
            self.open = self.open if self.inline else None  # 1990s songs and letters span blank lines
            return "blank"
        if self.notice[i] or self.ended:  # after "THE END" only notices are expected; report anything else
            return _after_end(text, self.notice[i], self.categories[i - 1])
        place, self.place = self.place, False
        return self._inline(i, text, place) if self.inline else self._alone(i, text, place)

    def _heading(self, i: int, text: str) -> str:
        kind = heading_kind(text)
        if kind == "spoken" and text.startswith("SONG") and self.speaker is not None:
            return "heading"  # the speaker sings what follows
        self.open, self.block, self.entered, self.ended = None, "heading", None, kind == "end"
        if kind == "act":
            self.speaker, self.place = None, is_bare(text)
        elif kind == "spoken":  # a prologue or epilogue speaks the lines that follow
            self.speaker, self.speaker_indent = text.strip("[]. "), -1
            nxt = self.lines[i + 1].strip() if i + 1 < len(self.lines) else ""
            if nxt and not heading_kind(nxt) and not is_direction(nxt) and not self.inline:
                self._start(self.speaker)
                self.block = "speech"
                return "speaker"
        return "heading"

    def _inline(self, i: int, text: str, place: bool) -> str:
        """1990s edition: ``  NAME. speech`` at the margin, continuations indented further, directions
        unindented, centred or set off to the right."""
        line, ind = self.lines[i], indent(self.lines[i])
        speech = inline_speech(line, self.known)
        if speech and ind != self.margin and not (ind < self.margin and speech[1] in self.known):
            speech = None
        if heading_kind(text) and not speech:
            return self._heading(i, text)
        if place and not is_direction(text) and not (speech and ind == self.margin):
            return "heading"  # "Venice. A street" under "ACT I. SCENE I." is a place, not Venice speaking
        if speech:
            self.speaker_indent, name, rest = speech
            self._start(name)
            return self._speech(rest)
        if self.speaker is not None and ind > self.speaker_indent:  # after a blank line a direction stands alone
            if self._directs(text, ind):
                return self._direction(text, inside=i > 0 and self.categories[i - 1] != "blank")
            return self._speech(text)
        if (alone := alone_speaker(self.lines, i)) and indent(self.lines[i + 1]) > ind:  # the speech on the next line
            self.speaker_indent = ind
            self._start(alone)
            if to := aside(self.lines[i]):  # the line is kept whole: the name, then its direction
                self._direction(to, inside=True)
            return "speaker"
        continued = self.open == "direction" and self.categories[i - 1] == "direction"
        if ind != self.margin or is_direction(text) or continued:
            return self._direction(text, inside=False)
        if self.speaker is not None and self.categories[i - 1] == "speech" and any(c.isalpha() for c in text):
            return self._speech(text)  # a verse at the margin (a slip of the type): "  KEEPER, I prithee sit by"
        return "unrecognised"

    def _directs(self, text: str, ind: int) -> bool:
        """A direction inside a speech: bracketed, ``Exit`` set off to the right, or the rest of one."""
        if is_bracketed(text) or is_direction(text):
            return is_bracketed(text) or ind >= 8
        last = self.passages[-1][-1] if self.open and self.passages[-1] else ("", "", False)
        return last[0] == "direction" and (text[0].islower() or last[1].count("[") > last[1].count("]"))

    def _alone(self, i: int, text: str, place: bool) -> str:
        """Current edition: blocks between blank lines, opened by a speaker, a direction or a heading."""
        if heading_kind(text):
            return self._heading(i, text)
        block, self.block = self.block, self.block or "text"
        name = alone_speaker(self.lines, i)
        if block == "heading" and not name and not is_direction(text):
            return "heading"  # a heading wrapped onto a second line
        if block == "speech":
            return self._direction(text, inside=True) if is_bracketed(text) else self._speech(text)
        if name:
            self._start(name)
            self.block = "speech"
            if to := aside(self.lines[i]):  # the line is kept whole: the name, then its direction
                self._direction(to, inside=True)
            return "speaker"
        if block == "direction" or is_direction(text) or indent(self.lines[i]) == 1:
            self.block = "direction"
            return self._direction(text, inside=False)
        if place:
            self.block = "heading"
            return "heading"
        lines = self.lines
        size = next((k for k in range(len(lines) - i) if not lines[i + k].strip()), len(lines) - i)  # of the block
        if self.speaker is None and self.entered and size > 3:  # "Enter Gower." then his unnamed speech
            self.speaker = self.entered
        if self.speaker is not None:  # the speech goes on after a direction
            self.block = "speech"
            return self._speech(text)
        directs = size <= 3 or any(mentions_entrance(ln) for ln in lines[i : i + size])
        self.block = "direction" if block is None and directs else "unrecognised"  # after a heading: a direction
        return self._direction(text, inside=False) if self.block == "direction" else "unrecognised"

    def _start(self, name: str) -> None:
        """A new speaker: a passage that opens with the name."""
        self.speaker, self.open, self.open_speaker, self.entered = name, "speech", name, None
        self.passages.append([("speaker", f"{name}.", False)])
        self.speeches, self.turn = self.speeches + 1, name

    def _speech(self, text: str) -> str:
        if self.open != "speech" or self.open_speaker != self.speaker:  # the speech goes on after a direction
            self.passages.append([("speaker", f"{self.speaker}.", False)] if self.speaker else [])
            self.open, self.open_speaker = "speech", self.speaker
            self.speeches, self.turn = self.speeches + (self.turn != self.speaker), self.speaker
        self.passages[-1].append(("speech", " ".join(text.split()), False))
        return "speech"

    def _direction(self, text: str, *, inside: bool) -> str:
        if not ((inside and self.open == "speech") or self.open == "direction"):
            self.passages.append([])
            self.open = "direction"
        self.passages[-1].append(("direction", " ".join(text.lstrip("<").split()), is_direction(text)))
        self.entered = entered_alone(text) or self.entered
        return "direction"


def _render(entries: list[tuple[str, str, bool]]) -> str:
    """A passage's text; each group of direction lines in brackets unless the file bracketed it."""
    out: list[str] = []
    group: list[str] = []
    for category, line, opens in [*entries, ("end", "", True)]:
        if group and (category != "direction" or opens):
            text = "\n".join(group) if group[0].startswith("[") else "[" + "\n".join(group)
            out.append(text + "]" * (text.count("[") > text.count("]")))
            group = []
        if category == "direction":
            group.append(line)
        elif category != "end":
            out.append(line)
    return "\n".join(out)


def _after_end(text: str, notice: bool, previous: str) -> str:
    """After a work's ``THE END``: notices and lines about the file (``End of this Etext of The Complete
    Works of William`` and the line that finishes it); anything else is reported."""
    return "notice" if notice or is_boilerplate(text) or previous == "notice" else "unrecognised"


def _outside(text: str, notice: bool, work: Work | None, title: bool, ended: str | None) -> str:
    """A line no play reads: the front matter, a poem, or (``ended``: the previous line's category)
    what follows a poem's ``THE END``."""
    if not text:
        return "blank"
    if ended is not None:
        return _after_end(text, notice, ended)
    if notice or work is None:
        return "notice"
    return "heading" if title or is_title_page(text) or heading_kind(text) in ("end", "other") else "poem"


def read_works(lines: list[str]) -> Reading:
    """Categories for every line and the kept passages of every play (see the module docstring)."""
    notice = notices(lines)
    works, contents = find_works(lines, notice)
    inline = sum(inline_speech(ln) is not None for ln in lines) > sum(
        alone_speaker(lines, i) is not None for i in range(len(lines))
    )
    categories = [_outside(ln.strip(), notice[i], None, False, None) for i, ln in enumerate(lines)]
    for i in contents:
        categories[i] = "contents" if lines[i].strip() else "blank"
    reading = Reading("1990s" if inline else "current", categories, works)
    for work in works:
        passages: list[str] = []
        speeches, ended = 0, False
        if work.is_play:
            passages, speeches = _PlayReader(lines, notice, categories, inline, work).read()
        else:
            for i in range(work.start, work.end):
                text, previous = lines[i].strip(), categories[i - 1] if ended else None
                categories[i] = _outside(text, notice[i], work, i == work.title_line, previous)
                ended = ended or heading_kind(text) == "end"
        reading.passages.append(passages)
        reading.speeches.append(speeches)
    return reading

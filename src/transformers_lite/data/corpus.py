"""A generator's training text, whatever shape it comes in: one file, a folder (every text file under
it), or a glob pattern (``"src/**/*.py"``).

The files are read in sorted path order, each ending with a line break (one is added where a file has
none), one after another, so the last files make the validation split (the last fraction of the text).
``exclude`` leaves out the files matching any of its comma-separated glob patterns (``*.json,data/*``),
matched against each file's name and its path inside the folder (or as the pattern found it). Files that
are not UTF-8 text (compiled files by their suffix, ``.pyc``, ``.so``, ...; binary files, which hold NUL
bytes; text in another encoding) and hidden files and folders (``.git``) are skipped and reported in one
line, never read as text. A corpus's
sha256 is that of one file's bytes, or of the joined text for several: moving the files leaves it
unchanged, editing any of them changes it.
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import os
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DataError, TliteWarning, warn
from .formats import check_file, read_bytes
from .sources import read_text_file, sha256, text_of

GLOB_CHARS = "*?["
# files a build writes beside the sources (Python's bytecode, object files, libraries, Java classes)
COMPILED = {".pyc", ".pyo", ".o", ".obj", ".a", ".so", ".dylib", ".dll", ".exe", ".class", ".wasm"}
COMPILED_FILE, BINARY_FILE = "compiled", "binary (holds NUL bytes)"


@dataclass(frozen=True)
class Corpus:
    """The joined text, each file read with its characters, and each file skipped with the reason."""

    text: str
    files: list[tuple[Path, int]]
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    excluded: list[Path] = field(default_factory=list)  # the files --exclude left out

    def report(self, shown: int = 5) -> str:
        """One line: how many files and characters, the largest files, and what was skipped."""
        if len(self.files) == 1 and not self.skipped and not self.excluded:
            return f"read {self.files[0][0]} ({self.files[0][1]:,} characters)"
        largest = sorted(self.files, key=lambda f: -f[1])[:shown]
        line = f"read {len(self.files):,} files ({len(self.text):,} characters; largest: " + ", ".join(
            f"{p.name} {n:,}" for p, n in largest
        )
        line += ")" if len(self.files) <= shown else ", ...)"
        if self.excluded:
            names = ", ".join(p.name for p in self.excluded[:3]) + (", ..." if len(self.excluded) > 3 else "")
            line += f"; left out {len(self.excluded):,} files matching --exclude ({names})"
        if self.skipped:
            line += f"; {self.skipped_line()}"
        return line

    def skipped_line(self) -> str:
        """The files skipped, in one phrase grouped by why: compiled files by suffix, binary files, and
        the others (not UTF-8, empty) with the first one's reason."""
        compiled = Counter(p.suffix.lower() for p, why in self.skipped if why == COMPILED_FILE)
        binary = [p.name for p, why in self.skipped if why == BINARY_FILE]
        other = [(p, why) for p, why in self.skipped if why not in (COMPILED_FILE, BINARY_FILE)]
        parts = []
        if compiled:
            by_suffix = ", ".join(f"{n:,} {suffix}" for suffix, n in compiled.most_common())
            parts.append(f"{sum(compiled.values()):,} compiled ({by_suffix})")
        if binary:
            parts.append(f"{len(binary):,} binary ({', '.join(binary[:3])}{', ...' if len(binary) > 3 else ''})")
        if other:
            more = f" and {len(other) - 1:,} more" if len(other) > 1 else ""
            parts.append(f"{len(other):,} other ({other[0][0].name}: {other[0][1]}{more})")
        return f"skipped {len(self.skipped):,} files that are not UTF-8 text: " + "; ".join(parts)


def is_corpus_spec(spec: str | Path) -> bool:
    """Whether ``spec`` names several files (a folder or a glob pattern) rather than one file."""
    return Path(spec).is_dir() or (not Path(spec).exists() and any(c in str(spec) for c in GLOB_CHARS))


def excluded(path: Path, root: Path | None, exclude: str | None) -> bool:
    """Whether ``path`` (found under the folder ``root``, or by a pattern) matches one of ``exclude``'s
    comma-separated glob patterns, by its name or its path (inside ``root``)."""
    patterns = [p.strip() for p in (exclude or "").split(",") if p.strip()]
    inside = path.relative_to(root).as_posix() if root is not None else path.as_posix()
    return any(fnmatch.fnmatch(path.name, p) or fnmatch.fnmatch(inside, p) for p in patterns)


def corpus_files(spec: str | Path, exclude: str | None = None) -> list[Path]:
    """The files ``spec`` names: itself, every file under a folder (hidden ones left out), or a glob's
    matches; those matching ``exclude`` left out (``read_corpus`` says which)."""
    return [p for p in _found(spec) if not excluded(p, _root(spec), exclude)]


def _root(spec: str | Path) -> Path | None:
    return Path(spec) if Path(spec).is_dir() else None


def _found(spec: str | Path) -> list[Path]:
    path = Path(spec)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = [p for p in path.rglob("*") if p.is_file() and not _hidden(p.relative_to(path))]
    elif any(c in str(spec) for c in GLOB_CHARS):
        found = [Path(p) for p in glob.glob(str(spec), recursive=True) if Path(p).is_file()]
    elif not path.exists():
        check_file(path)  # names what it is: not found, a link to nothing, a link loop
        raise FileNotFoundError(f"file not found: {path}")
    else:
        raise DataError(f"{path} is neither a file nor a folder")
    if not found:
        raise DataError(f"{spec}: no file found (a folder of text files, or a pattern like 'src/**/*.py')")
    return distinct(sorted(found), str(spec))


def distinct(paths: list[Path], spec: str, what: str = "file", used: str = "read") -> list[Path]:
    """``paths`` with each file once (the first name of it), and a warning naming those ``spec`` names more
    than once: a pattern like ``data/**/**/*.txt`` matches a file once per way of reaching it, and a link
    in a folder is a second name for the file it points to; read twice, its text would count double."""
    seen: dict[str, Path] = {}
    again: dict[Path, int] = {}
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            again[seen[real]] = again.get(seen[real], 1) + 1
        else:
            seen[real] = path
    if again:
        shown = ", ".join(f"{p} ({n} times)" for p, n in list(again.items())[:3]) + (", ..." if len(again) > 3 else "")
        warn(f"{spec} names {len(again):,} {what}(s) more than once: {shown}; each is {used} once")
    return list(seen.values())


def read_corpus(spec: str | Path, exclude: str | None = None) -> Corpus:
    """The text of ``spec`` without the files matching ``exclude`` (see the module docstring); an error when
    no file is left or none holds text."""
    found = _found(spec)
    files = [p for p in found if not excluded(p, _root(spec), exclude)]
    left_out = [p for p in found if p not in set(files)]
    if not files:
        raise DataError(f"{spec}: --exclude {exclude!r} leaves out every one of its {len(found):,} files")
    if len(files) == 1 and not left_out:
        text = read_text_file(files[0])
        return Corpus(text, [(files[0], len(text))])
    texts, read, skipped = [], [], []
    for path in files:
        if path.suffix.lower() in COMPILED:  # never text, whatever bytes it starts with
            skipped.append((path, COMPILED_FILE))
            continue
        try:
            raw = read_bytes(path)
            if b"\x00" in raw:
                skipped.append((path, BINARY_FILE))
                continue
            text = text_of(raw, path)
        except DataError as err:  # not UTF-8, empty, unreadable: reported, never read as text
            skipped.append((path, str(err).split(": ", 1)[-1]))
            continue
        texts.append(text if text.endswith("\n") else text + "\n")
        read.append((path, len(text)))
    if not texts:
        raise DataError(f"{spec}: none of its {len(files):,} files holds UTF-8 text")
    return Corpus("".join(texts), read, skipped, left_out)


def corpus_sha256(spec: str | Path, exclude: str | None = None) -> str:
    """One file's sha256 (of its bytes), or the sha256 of several files' joined text (``exclude``'s left
    out; what reading them had to say was said when they were read)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TliteWarning)
        files = corpus_files(spec, exclude)
        if len(files) == 1 and not exclude:
            return sha256(files[0])
        return hashlib.sha256(read_corpus(spec, exclude).text.encode("utf-8")).hexdigest()


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)

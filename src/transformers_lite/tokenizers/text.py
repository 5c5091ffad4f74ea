"""Text normalisation, splitting text into words, and vocabulary selection.

``simplify`` lowercases, decomposes letters (Unicode NFD) and drops the combining marks, so
"Crème" becomes "creme"; it also drops the apostrophes ' ` ’ (so "don't" -> "dont") and every
default-ignorable character (``ignorable``: the soft hyphen U+00AD, zero-width space U+200B, ZWNJ and
ZWJ, the word joiner U+2060, the byte-order mark U+FEFF, ...), which a reader never sees, so
"excel\u00adlent" is "excellent"; and it turns newlines into spaces. ``words`` (post 000's split) keeps
the matches of ``\\w\\w+\\b`` (two or more word characters), so single letters and punctuation
disappear. ``words_and_punctuation`` (the translator's word-level split) keeps every word and
punctuation mark, default-ignorable characters dropped too.

Both splits are what a word tokenizer's ``encode`` runs, at training and at use alike (classify,
translate, trace, evaluate), so text is normalised one way. Character and BPE tokenizers keep every
character: one the model never saw is read as its unknown symbol and named in a notice.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from ..atomic import atomic_write_text

WORD_PATTERN = re.compile(r"\w\w+\b")
_WORD_OR_MARK = re.compile(r"\w+|[^\w\s]")

_ASCII_TABLE = str.maketrans({"'": None, "`": None, "\n": " "})


# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): invisible when rendered
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip


@functools.cache
def ignorable(char: str) -> bool:
    """Whether ``char`` is a default-ignorable code point (a soft hyphen, a zero-width space, ...)."""
    code = ord(char)
    return any(low <= code <= high for low, high in _IGNORABLE)


@functools.cache
def _dropped(char: str) -> bool:
    return char in "'`\u2019" or unicodedata.category(char)[0] == "M" or ignorable(char)


def drop_ignorable(text: str) -> str:
    """``text`` without its default-ignorable characters (see ``ignorable``)."""
    if text.isascii():
        return text
    drop = [c for c in set(text) if ignorable(c)]
    return re.sub(char_class(drop), "", text) if drop else text


def char_class(chars: Iterable[str]) -> str:
    """A regex character class matching exactly ``chars``."""
    return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]"


def simplify(text: str) -> str:
    """Lowercase, NFD, drop combining marks / apostrophes / default-ignorable characters, newlines to spaces."""
    text = text.lower()
    if text.isascii():  # fast path: NFD and mark removal change nothing in ASCII
        return text.translate(_ASCII_TABLE)
    text = unicodedata.normalize("NFD", text)
    drop = [c for c in set(text) if _dropped(c)]  # a small class of the characters present is fast
    if drop:
        text = re.sub(char_class(drop), "", text)
    return text.replace("\n", " ")


def words(
    text: str, transform: Callable[[str], str] | None = simplify, pattern: re.Pattern = WORD_PATTERN
) -> list[str]:
    """Split ``text`` into words after ``transform`` (``simplify`` by default)."""
    if transform is not None:
        text = transform(text)
    return pattern.findall(text)


def words_and_punctuation(text: str, lowercase: bool = True) -> list[str]:
    """Words and punctuation marks as separate tokens: ``"Zwei Hunde."`` -> ``["zwei", "hunde", "."]``."""
    text = drop_ignorable(text)
    return _WORD_OR_MARK.findall(text.lower() if lowercase else text)


# how a text becomes words, by name: post 000's words (punctuation dropped), or words and punctuation marks
SPLITS: dict[str, Callable[[str], list[str]]] = {"words": words, "punct": words_and_punctuation}


def document_frequencies(
    corpus: Iterable[str],
    transform: Callable[[str], str] | None = simplify,
    pattern: re.Pattern = WORD_PATTERN,
    *,
    split: str = "words",
) -> Counter:
    """How many documents contain each word (a word counts once per document). ``split`` names a rule
    of ``SPLITS``; ``transform`` and ``pattern`` shape the ``words`` rule."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {sorted(SPLITS)}, got {split!r}")
    counts: Counter = Counter()
    for document in corpus:
        counts.update(set(words(document, transform, pattern) if split == "words" else SPLITS[split](document)))
    return counts


def select_vocabulary(
    corpus: Iterable[str],
    min_document_frequency: int = 10,
    max_size: int | None = None,
    transform: Callable[[str], str] | None = simplify,
    pattern: re.Pattern = WORD_PATTERN,
    *,
    split: str = "words",
) -> list[str]:
    """Words (as ``SPLITS[split]`` cuts them) found in at least ``min_document_frequency`` documents,
    most frequent first.

    Ties are broken alphabetically so the result does not depend on the corpus order.
    """
    if min_document_frequency < 1:
        raise ValueError(f"min_document_frequency must be >= 1, got {min_document_frequency}")
    counts = document_frequencies(corpus, transform, pattern, split=split)
    vocab = sorted((w for w, n in counts.items() if n >= min_document_frequency), key=lambda w: (-counts[w], w))
    return vocab if max_size is None else vocab[:max_size]


def load_vocabulary(path: str | Path) -> list[str]:
    """One token per line (the posts' format); blank trailing lines are ignored; duplicates are errors."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"vocabulary file not found: {path}")
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    while lines and lines[-1] == "":
        lines.pop()
    seen: dict[str, int] = {}
    for lineno, token in enumerate(lines, 1):
        token = token.rstrip("\r")
        if token in seen:
            raise ValueError(f"{path}:{lineno}: duplicate token {token!r} (first on line {seen[token]})")
        seen[token] = lineno
    if not seen:
        raise ValueError(f"{path}: the vocabulary file is empty")
    return list(seen)


def save_vocabulary(vocab: list[str], path: str | Path) -> None:
    atomic_write_text(path, "".join(t + "\n" for t in vocab))

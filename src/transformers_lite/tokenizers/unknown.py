"""What a text holds that a tokenizer reads as its unknown symbol, and the one sentence that says so.

Every view and reader of a text (generation's prompt, the forward traces of every family, a
translator's source and target) asks ``unknown_in`` and shows ``unknown_notice``, so text the model
never saw is never shown as ``Ø Ø Ø`` (or read as ``<unk>``) without a word: the notice names the
pieces (characters, or words for a word tokenizer), each once, and how many positions they take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import warn
from .base import Tokenizer


@dataclass(frozen=True)
class Unknown:
    pieces: list[str]  # what reads as the unknown symbol, each once, in order
    count: int  # how many of the text's tokens are the unknown symbol
    symbol: str = ""  # the unknown symbol as shown
    words: bool = False  # pieces are words (a word tokenizer), else characters


def unknown_in(tokenizer: Tokenizer, text: str, ids: list[int] | None = None) -> Unknown:
    """The pieces of ``text`` that ``tokenizer`` reads as its unknown symbol (``ids``: its ids, when known)."""
    unk = tokenizer.unk_id
    if unk is None:  # byte-level tokenizers read every text
        return Unknown([], 0)
    ids = tokenizer.encode(text) if ids is None else ids
    if unk not in ids:
        return Unknown([], 0)
    symbol = tokenizer.token(unk)
    if tokenizer.kind == "word":
        found = [w for w, i in zip(tokenizer.words(text), ids) if i == unk]  # type: ignore[attr-defined]
    elif tokenizer.kind == "char":  # the unknown symbol typed as itself is no unknown character
        found = [c for c, i in zip(text, ids) if i == unk and c != symbol]
    else:  # a subword tokenizer: the characters it cannot read alone
        found = [c for c in dict.fromkeys(text) if not c.isspace() and unk in tokenizer.encode(c)]
    count = len(found) if tokenizer.kind in ("word", "char") else ids.count(unk)
    return Unknown(list(dict.fromkeys(found)), count, symbol, tokenizer.kind == "word")


def unknown_notice(what: str, unknown: Unknown) -> str | None:
    """The sentence that tells a user about ``unknown`` in ``what`` ("the prompt", "the target"), or ``None``."""
    if not unknown.count:
        return None
    shown = " ".join(repr(p) for p in unknown.pieces[:12]) + (" ..." if len(unknown.pieces) > 12 else "")
    noun = "words" if unknown.words else "characters"
    tokens = f"{unknown.count:,} token{'s' if unknown.count > 1 else ''}"
    return (
        f"{what} has {noun} the model never saw in training ({shown}; {tokens}); each reads as the unknown "
        f"symbol {unknown.symbol}"
    )


def unknown_notes(what: str, tokenizer: Tokenizer, text: str) -> list[str]:
    """``[notice]`` for a view's list of notices (empty when ``tokenizer`` reads all of ``text``)."""
    notice = unknown_notice(what, unknown_in(tokenizer, text))
    return [notice] if notice else []


def warn_unknown_characters(what: str, tokenizer: Tokenizer, texts: Sequence[str]) -> None:
    """One warning naming the characters of ``texts`` (what a model is evaluated on) that ``tokenizer``
    reads as its unknown symbol, with how many tokens they take: a score over characters no training
    text held (a soft hyphen, another alphabet) is said, never read without a word. A word tokenizer's
    unknown words are its vocabulary's cut by design (``min_df``), counted in the score as in training."""
    if tokenizer.unk_id is None or tokenizer.kind == "word":
        return
    pieces: list[str] = []
    count = 0
    for text in texts:
        found = unknown_in(tokenizer, text)
        pieces += found.pieces
        count += found.count
    notice = unknown_notice(what, Unknown(list(dict.fromkeys(pieces)), count, tokenizer.token(tokenizer.unk_id)))
    if notice:
        warn(notice + "; the scores include them")

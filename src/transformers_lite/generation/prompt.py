"""The one prompt check: what a generator reads of a prompt, and which characters it never saw.

Used by ``Run.generate`` (and so by ``tlite generate``) and by the inspector, so a prompt means the same
thing everywhere: an empty prompt is an error; characters outside the model's vocabulary are read
as its unknown symbol and named in a warning (or a notice on the page).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DataError
from ..tokenizers import Tokenizer
from ..tokenizers.unknown import Unknown, unknown_in, unknown_notice


@dataclass(frozen=True)
class Prompt:
    text: str
    ids: list[int]
    found: Unknown  # what reads as the unknown symbol (``tokenizers.unknown``)

    @property
    def unknown(self) -> list[str]:
        """The characters (or words) read as the unknown symbol, each once, in order."""
        return self.found.pieces

    @property
    def notice(self) -> str | None:
        """The sentence that tells a user about ``unknown``, or ``None``."""
        return unknown_notice("the prompt", self.found)


def read_prompt(tokenizer: Tokenizer, prompt: str) -> Prompt:
    """``prompt`` as ids for ``tokenizer``; a ``DataError`` when nothing can be read."""
    if not isinstance(prompt, str):
        raise DataError(f"the prompt must be a string, got {type(prompt).__name__}")
    ids = tokenizer.encode(prompt)
    if not prompt or not ids:
        raise DataError("the prompt is empty; give at least one character to continue")
    return Prompt(prompt, ids, unknown_in(tokenizer, prompt, ids))


def prompt_pieces(tokenizer: Tokenizer, prompt: str, ids: list[int]) -> list[str]:
    """``prompt`` cut where its tokens end: the text each token adds to the decoded prefix, as the
    generated tokens are streamed (a byte-level piece ending inside a character joins the next one).
    Where decoding does not give the prompt back (characters read as the unknown symbol), its
    characters, one per token of a character model."""
    pieces: list[str] = []
    shown = ""
    for end in range(1, len(ids) + 1):
        text = tokenizer.decode(ids[:end])
        if text.endswith("\ufffd") and end < len(ids):
            continue  # an incomplete UTF-8 sequence: the next byte completes it
        pieces.append(text[len(shown) :])
        shown = text
    return pieces if "".join(pieces) == prompt else list(prompt)

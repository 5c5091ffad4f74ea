"""The one prompt check: what a generator reads of a prompt, and which characters it never saw.

Used by ``Run.generate`` (and so by ``tlite generate``) and by the inspector, so a prompt means the same
thing everywhere: an empty prompt is an error; characters outside the model's vocabulary are read
as its unknown symbol and named in a warning (or a notice on the page).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DataError
from ..tokenizers import Tokenizer


@dataclass(frozen=True)
class Prompt:
    text: str
    ids: list[int]
    unknown: list[str]  # characters read as the unknown symbol, each once, in order

    @property
    def notice(self) -> str | None:
        """The sentence that tells a user about ``unknown``, or ``None``."""
        if not self.unknown:
            return None
        shown = " ".join(repr(c) for c in self.unknown)
        return f"the prompt has characters the model never saw in training ({shown}); each reads as the unknown symbol"


def read_prompt(tokenizer: Tokenizer, prompt: str) -> Prompt:
    """``prompt`` as ids for ``tokenizer``; a ``DataError`` when nothing can be read."""
    if not isinstance(prompt, str):
        raise DataError(f"the prompt must be a string, got {type(prompt).__name__}")
    ids = tokenizer.encode(prompt)
    if not prompt or not ids:
        raise DataError("the prompt is empty; give at least one character to continue")
    unknown: list[str] = []
    if tokenizer.kind == "char" and tokenizer.unk_id in ids:
        unk = tokenizer.token(tokenizer.unk_id)
        unknown = list(dict.fromkeys(c for c, i in zip(prompt, ids) if i == tokenizer.unk_id and c != unk))
    return Prompt(prompt, ids, unknown)

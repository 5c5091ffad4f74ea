"""Post 004's character tokenizer: the sorted unique characters of a text plus an unknown symbol.

Ids are positions in that sorted list, the unknown symbol (``Ø``) first. A character the training
text did not contain becomes the unknown id; decoding joins the characters back into a string.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from torch import Tensor

from .base import Tokenizer


class CharTokenizer(Tokenizer):
    kind = "char"

    def __init__(self, characters: Sequence[str], unk: str = "Ø") -> None:
        chars = [unk] + [c for c in characters if c != unk]
        if any(len(c) != 1 for c in chars):
            raise ValueError(f"a character tokenizer needs single characters, got {[c for c in chars if len(c) != 1]}")
        if len(set(chars)) != len(chars):
            raise ValueError("duplicate character in the vocabulary")
        self.vocabulary: list[str] = chars
        self.lookup: dict[str, int] = {c: i for i, c in enumerate(chars)}
        self.unk = unk
        self.unk_id = 0

    @classmethod
    def from_text(cls, text: str, unk: str = "Ø") -> CharTokenizer:
        """The post's vocabulary: ``sorted(unique(text))`` with the unknown symbol first."""
        return cls(sorted(set(text) - {unk}), unk)

    def __len__(self) -> int:
        return len(self.vocabulary)

    def __repr__(self) -> str:
        return f"CharTokenizer(length(vocabulary)={len(self)}, unksym={self.unk!r})"

    def encode(
        self, text: str, *, max_length: int | None = None, add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        get, unk = self.lookup.get, self.need("unk")
        return self.wrap(
            [get(c, unk) for c in text],
            max_length,
            self.need("bos") if add_bos else None,
            self.need("eos") if add_eos else None,
        )

    def decode(self, ids: Iterable[int], *, skip_special: bool = True) -> str:
        vocab, n = self.vocabulary, len(self.vocabulary)
        return "".join(vocab[i] if 0 <= i < n else self.unk for i in (ids.tolist() if isinstance(ids, Tensor) else ids))

    def token(self, i: int) -> str:
        return self.vocabulary[i] if 0 <= i < len(self.vocabulary) else self.unk

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "vocabulary": self.vocabulary, "unk": self.unk}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CharTokenizer:
        return cls(data["vocabulary"], data.get("unk", "Ø"))

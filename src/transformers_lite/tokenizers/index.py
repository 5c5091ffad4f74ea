"""Index tokenizers: map tokens (words or characters) to integer ids and back.

``IndexTokenizer`` is the seeds' tokenizer: a vocabulary list plus a lookup dict, with an unknown
symbol inserted first when the vocabulary lacks it. Optional special tokens (pad, bos, eos) get
fixed ids right after it: ``unk=0, pad=1, bos=2, eos=3`` when all are asked for. Batches are padded
with the *pad* id (the seeds pad with the unknown id, so the model cannot tell padding from a rare
word; we fix that) and come with a mask of real tokens.

``CharTokenizer`` is seed 004's character vocabulary: the sorted unique characters of a text plus
an unknown symbol.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import torch
from torch import Tensor

from ..atomic import atomic_write_json


class IndexTokenizer:
    kind = "index"

    def __init__(self, vocabulary: Sequence[str], unk: str = "[UNK]", *, pad: str | None = None,
                 bos: str | None = None, eos: str | None = None) -> None:
        specials = [s for s in (unk, pad, bos, eos) if s is not None]
        if len(set(specials)) != len(specials):
            raise ValueError(f"special tokens must differ, got {specials}")
        vocab = [t for t in specials] + [t for t in vocabulary if t not in specials]
        if len(set(vocab)) != len(vocab):
            dup = next(t for t in vocab if vocab.count(t) > 1)
            raise ValueError(f"duplicate token {dup!r} in the vocabulary")
        self.vocabulary: list[str] = vocab
        self.lookup: dict[str, int] = {t: i for i, t in enumerate(vocab)}
        self.unk, self.pad, self.bos, self.eos = unk, pad, bos, eos
        self.unk_id = self.lookup[unk]
        self.pad_id = None if pad is None else self.lookup[pad]
        self.bos_id = None if bos is None else self.lookup[bos]
        self.eos_id = None if eos is None else self.lookup[eos]

    def __len__(self) -> int:
        return len(self.vocabulary)

    def __repr__(self) -> str:
        specials = ", ".join(f"{k}={v!r}" for k, v in (("pad", self.pad), ("bos", self.bos), ("eos", self.eos)) if v)
        return f"{type(self).__name__}(length(vocabulary)={len(self)}, unksym={self.unk!r}{', ' if specials else ''}{specials})"

    def encode_token(self, token: str) -> int:
        return self.lookup.get(token, self.unk_id)

    def encode(self, tokens: Iterable[str], max_length: int | None = None, *, add_bos: bool = False,
               add_eos: bool = False) -> list[int]:
        """Ids of a token sequence, optionally truncated and wrapped in BOS/EOS."""
        get, unk = self.lookup.get, self.unk_id
        ids = [get(t, unk) for t in tokens]
        if add_bos:
            ids.insert(0, self._need("bos"))
        if max_length is not None:
            ids = ids[: max_length - (1 if add_eos else 0)]
        if add_eos:
            ids.append(self._need("eos"))
        return ids

    def _need(self, name: str) -> int:
        value = getattr(self, f"{name}_id")
        if value is None:
            raise ValueError(f"this tokenizer has no {name} token; create it with {name}=...")
        return value

    def encode_batch(self, batch: Sequence[Iterable[str]], max_length: int | None = None, *,
                     pad_to: int | None = None, add_bos: bool = False, add_eos: bool = False) -> tuple[Tensor, Tensor]:
        """Padded ``(B, T)`` ids and the ``(B, T)`` bool mask of real tokens.

        ``pad_to`` pads every row to that length (the seed head needs exactly ``max_length``).
        """
        rows = [self.encode(seq, max_length, add_bos=add_bos, add_eos=add_eos) for seq in batch]
        return pad_batch(rows, self._need("pad"), pad_to)

    def decode(self, ids: Iterable[int], *, skip_special: bool = False) -> list[str]:
        specials = {self.pad_id, self.bos_id, self.eos_id} - {None} if skip_special else set()
        out = []
        for i in (ids.tolist() if isinstance(ids, Tensor) else ids):
            if i in specials:
                continue
            out.append(self.vocabulary[i] if 0 <= i < len(self.vocabulary) else self.unk)
        return out

    def to_dict(self) -> dict:
        return {"kind": self.kind, "vocabulary": self.vocabulary, "unk": self.unk, "pad": self.pad,
                "bos": self.bos, "eos": self.eos}

    def save(self, path: str | Path) -> None:
        atomic_write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, data: dict) -> "IndexTokenizer":
        return cls(data["vocabulary"], data["unk"], pad=data.get("pad"), bos=data.get("bos"), eos=data.get("eos"))


class CharTokenizer(IndexTokenizer):
    """Characters of a text, sorted, plus an unknown symbol (seed 004 uses 'Ø')."""

    kind = "char"

    @classmethod
    def from_text(cls, text: str, unk: str = "Ø") -> "CharTokenizer":
        return cls(sorted(set(text) - {unk}), unk)

    def encode_text(self, text: str) -> list[int]:
        return self.encode(text)

    def decode_text(self, ids: Iterable[int]) -> str:
        return "".join(self.decode(ids))


def pad_batch(rows: Sequence[Sequence[int]], pad_id: int, pad_to: int | None = None) -> tuple[Tensor, Tensor]:
    """Stack id lists into ``(B, T)`` padded with ``pad_id`` and a ``(B, T)`` mask of real tokens."""
    longest = max((len(r) for r in rows), default=0)
    width = longest if pad_to is None else pad_to
    if longest > width:
        raise ValueError(f"a row of {longest} ids does not fit pad_to={width}")
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.bool)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.as_tensor(row, dtype=torch.long)
        mask[i, : len(row)] = True
    return ids, mask


def load_tokenizer(path: str | Path):  # noqa: ANN201 - any tokenizer kind
    """Load a tokenizer JSON written by ``save`` (index, char or bpe)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tokenizer file not found: {path}")
    data = json.loads(path.read_text(encoding="utf-8"))
    return tokenizer_from_dict(data, path)


def tokenizer_from_dict(data: dict, origin: object = "tokenizer"):  # noqa: ANN201
    kind = data.get("kind")
    if kind == "index":
        return IndexTokenizer.from_dict(data)
    if kind == "char":
        return CharTokenizer.from_dict(data)
    if kind == "bpe":
        from .bpe import BPETokenizer

        return BPETokenizer.from_dict(data)
    raise ValueError(f"{origin}: unknown tokenizer kind {kind!r}")

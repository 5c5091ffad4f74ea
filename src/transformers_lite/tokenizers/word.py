"""Word-level tokenizer: a vocabulary list, a lookup dict, and a rule that splits text into words.

This is the posts' ``IndexTokenizer`` with the text splitting built in, so ``encode`` takes a
string like every other tokenizer. The unknown symbol comes first; optional special tokens (pad,
bos, eos) get fixed ids right after it: ``unk=0, pad=1, bos=2, eos=3`` when all are asked for.
Batches are padded with the *pad* id (the posts pad with the unknown id, so their model cannot tell
padding from a rare word) and come with a mask of real tokens.

Two splits:

* ``"words"`` (post 000, reviews): ``simplify`` then words of two or more characters; punctuation is
  dropped, so ``decode`` gives the words joined by spaces.
* ``"punct"`` (the translator's word-level option): lowercase words and punctuation marks;
  ``decode`` joins them and removes the space before punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from .base import Tokenizer
from .fast_words import encode_corpus
from .text import SPLITS

OLD_SPLITS = {"seed": "words"}  # the words split's name until 0.2
_SPACE_BEFORE_MARK = re.compile(r" ([.,!?;:])")


class WordTokenizer(Tokenizer):
    kind = "word"

    def __init__(
        self,
        vocabulary: Sequence[str],
        unk: str = "[UNK]",
        *,
        pad: str | None = None,
        bos: str | None = None,
        eos: str | None = None,
        mask: str | None = None,
        split: str = "words",
    ) -> None:
        split = OLD_SPLITS.get(split, split)
        if split not in SPLITS:
            raise ValueError(f"split must be one of {sorted(SPLITS)}, got {split!r}")
        specials = [s for s in (unk, pad, bos, eos, mask) if s is not None]
        if len(set(specials)) != len(specials):
            raise ValueError(f"special tokens must differ, got {specials}")
        vocab = specials + [t for t in vocabulary if t not in specials]
        lookup = {t: i for i, t in enumerate(vocab)}
        if len(lookup) != len(vocab):
            dup = next(t for t in vocab if vocab.count(t) > 1)
            raise ValueError(f"duplicate token {dup!r} in the vocabulary")
        self.vocabulary: list[str] = vocab
        self.lookup: dict[str, int] = lookup
        self.split = split
        self.unk, self.pad, self.bos, self.eos, self.mask = unk, pad, bos, eos, mask
        self.unk_id = lookup[unk]
        self.pad_id, self.bos_id, self.eos_id, self.mask_id = (
            None if s is None else lookup[s] for s in (pad, bos, eos, mask)
        )

    def __len__(self) -> int:
        return len(self.vocabulary)

    def __repr__(self) -> str:
        named = (("pad", self.pad), ("bos", self.bos), ("eos", self.eos), ("mask", self.mask))
        specials = "".join(f", {k}={v!r}" for k, v in named if v)
        return f"WordTokenizer(length(vocabulary)={len(self)}, unksym={self.unk!r}{specials}, split={self.split!r})"

    def words(self, text: str) -> list[str]:
        """The tokens ``encode`` looks up, before the lookup."""
        return SPLITS[self.split](text)

    def encode_words(self, tokens: Iterable[str]) -> list[int]:
        """Ids of already split tokens (the posts' ``encode`` takes a list of words)."""
        get, unk = self.lookup.get, self.need("unk")
        return [get(t, unk) for t in tokens]

    def encode(
        self, text: str, *, max_length: int | None = None, add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        """Ids of ``text``: split, look up (unknown words -> ``unk_id``), wrap in BOS/EOS, truncate."""
        return self.wrap(
            self.encode_words(self.words(text)),
            max_length,
            self.need("bos") if add_bos else None,
            self.need("eos") if add_eos else None,
        )

    def fast_batch(
        self, texts: Sequence[str], max_length: int | None, pad_to: int | None
    ) -> tuple[Tensor, Tensor] | None:
        """Words-split corpora take the vectorised path (same ids as one ``encode`` per text)."""
        if self.split != "words":
            return None
        if pad_to is not None and max_length is not None and pad_to < max_length:
            raise ValueError(f"pad_to={pad_to} is shorter than max_length={max_length}")
        limit = np.iinfo(np.int64).max if max_length is None else max_length
        ids, lengths = encode_corpus(list(texts), self.lookup, self.need("unk"), self.need("pad"), limit, pad_to)
        valid = np.arange(ids.shape[1])[None, :] < lengths[:, None]  # (B, T)
        return torch.from_numpy(ids), torch.from_numpy(valid)

    def decode_words(self, ids: Iterable[int], *, skip_special: bool = True) -> list[str]:
        """Tokens of ``ids`` (out-of-range ids become the unknown symbol)."""
        drop = self.special_ids() if skip_special else set()
        n = len(self.vocabulary)
        ids = ids.tolist() if isinstance(ids, Tensor) else ids
        return [self.vocabulary[i] if 0 <= i < n else self.unk for i in ids if i not in drop]

    def decode(self, ids: Iterable[int], *, skip_special: bool = True) -> str:
        text = " ".join(self.decode_words(ids, skip_special=skip_special))
        return _SPACE_BEFORE_MARK.sub(r"\1", text) if self.split == "punct" else text

    def token(self, i: int) -> str:
        return self.vocabulary[i] if 0 <= i < len(self.vocabulary) else self.unk

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "split": self.split,
            "vocabulary": self.vocabulary,
            "unk": self.unk,
            "pad": self.pad,
            "bos": self.bos,
            "eos": self.eos,
            "mask": self.mask,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WordTokenizer:
        return cls(
            data["vocabulary"],
            data["unk"],
            pad=data.get("pad"),
            bos=data.get("bos"),
            eos=data.get("eos"),
            mask=data.get("mask"),
            split=data.get("split", "words"),
        )

"""Trainable byte-pair-encoding subword tokenizer (the translator's default).

The merges are learned by the Hugging Face ``tokenizers`` engine (fast, Rust; a core dependency,
imported on first use); ids, special tokens, padding and save/load follow this package's conventions
(``<unk>=0, <pad>=1, <bos>=2, <eos>=3``).
Text is split on whitespace and punctuation first (with a word-start marker ``▁``), so decoding
restores the spaces between words.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from torch import Tensor

from .base import Tokenizer

SPECIALS = ("<unk>", "<pad>", "<bos>", "<eos>")


class BPETokenizer(Tokenizer):
    kind = "bpe"

    def __init__(self, engine) -> None:  # noqa: ANN001 - a tokenizers.Tokenizer
        self.engine = engine
        self.unk_id, self.pad_id, self.bos_id, self.eos_id = (engine.token_to_id(s) for s in SPECIALS)
        if None in (self.unk_id, self.pad_id, self.bos_id, self.eos_id):
            raise ValueError(f"BPE vocabulary lacks one of the special tokens {SPECIALS}")

    @classmethod
    def train(
        cls, texts: Iterable[str], vocab_size: int = 8000, min_frequency: int = 2, lowercase: bool = False
    ) -> BPETokenizer:
        from tokenizers import Tokenizer as Engine
        from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

        if vocab_size < len(SPECIALS) + 1:
            raise ValueError(f"vocab_size must exceed the {len(SPECIALS)} special tokens, got {vocab_size}")
        engine = Engine(models.BPE(unk_token="<unk>"))
        norms = [normalizers.NFC()] + ([normalizers.Lowercase()] if lowercase else [])
        engine.normalizer = normalizers.Sequence(norms)
        engine.pre_tokenizer = pre_tokenizers.Metaspace()
        engine.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIALS), show_progress=False
        )
        engine.train_from_iterator(texts, trainer)
        return cls(engine)

    def __len__(self) -> int:
        return self.engine.get_vocab_size()

    def __repr__(self) -> str:
        return f"BPETokenizer(length(vocabulary)={len(self)})"

    def tokenize(self, text: str) -> list[str]:
        return self.engine.encode(text).tokens

    def encode(
        self, text: str, *, max_length: int | None = None, add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        return self.wrap(
            self.engine.encode(text).ids, max_length, self.bos_id if add_bos else None, self.eos_id if add_eos else None
        )

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        """Ids of many texts at once (the Rust engine encodes them in parallel)."""
        return [e.ids for e in self.engine.encode_batch(list(texts))]

    def decode(self, ids: Iterable[int], *, skip_special: bool = True) -> str:
        ids = ids.tolist() if isinstance(ids, Tensor) else list(ids)
        if skip_special:
            drop = self.special_ids()
            ids = [i for i in ids if i not in drop]
        return self.engine.decode(ids, skip_special_tokens=False)

    def token(self, i: int) -> str:
        return self.engine.id_to_token(i) or "<unk>"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "engine": json.loads(self.engine.to_str())}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BPETokenizer:
        from tokenizers import Tokenizer as Engine

        return cls(Engine.from_str(json.dumps(data["engine"])))

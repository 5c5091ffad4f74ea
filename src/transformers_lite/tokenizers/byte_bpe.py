"""GPT-2's byte-level BPE tokenizer (``vocab.json`` + ``merges.txt``, or the ``tokenizer.json`` current
``transformers`` saves), behind the same interface.

Text becomes UTF-8 bytes, each byte a printable symbol, then BPE merges: every string is encodable,
so there is no unknown id; ``<|endoftext|>`` (when present) is both BOS and EOS, and there is no pad.
The merges are applied by the Hugging Face ``tokenizers`` engine; saved as its JSON, like ``BPETokenizer``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from torch import Tensor

from ..errors import DataError
from .base import Tokenizer

END_OF_TEXT = "<|endoftext|>"


class ByteLevelBPETokenizer(Tokenizer):
    kind = "byte-bpe"

    def __init__(self, engine) -> None:  # noqa: ANN001 - a tokenizers.Tokenizer
        self.engine = engine
        self.unk_id = None
        self.pad_id = None
        self.bos_id = self.eos_id = engine.token_to_id(END_OF_TEXT)

    @classmethod
    def from_files(cls, vocab: str | Path, merges: str | Path) -> ByteLevelBPETokenizer:
        """Read GPT-2's ``vocab.json`` and ``merges.txt``."""
        from tokenizers import Tokenizer as Engine
        from tokenizers import decoders, models, pre_tokenizers

        for path in (vocab, merges):
            if not Path(path).is_file():
                raise FileNotFoundError(f"tokenizer file not found: {path}")
        try:
            engine = Engine(models.BPE.from_file(str(vocab), str(merges)))
        except Exception as err:  # the engine's own errors name no file
            raise DataError(f"{vocab} / {merges}: not a byte-level BPE vocabulary ({err})") from None
        engine.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        engine.decoder = decoders.ByteLevel()
        return cls(engine)

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 1024) -> ByteLevelBPETokenizer:
        """A byte-level BPE learned on ``texts`` (GPT-2's scheme: the 256 bytes, then ``vocab_size - 257``
        merges and ``<|endoftext|>``): any text encodes, nothing is unknown."""
        from tokenizers import Tokenizer as Engine
        from tokenizers import decoders, models, pre_tokenizers, trainers

        if vocab_size < 257 + 1:
            raise ValueError(
                f"a byte-level BPE needs vocab_size above the 256 bytes and <|endoftext|>, got {vocab_size}"
            )
        engine = Engine(models.BPE())
        engine.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        engine.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=[END_OF_TEXT],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        engine.train_from_iterator(texts, trainer)
        return cls(engine)

    @classmethod
    def from_hf_json(cls, path: str | Path) -> ByteLevelBPETokenizer:
        """Read the ``tokenizer.json`` that current ``transformers`` saves for GPT-2 (its BPE vocabulary
        and merges), rebuilt as ``from_files`` builds it, so both layouts encode alike."""
        from tokenizers import Tokenizer as Engine
        from tokenizers import decoders, models, pre_tokenizers

        try:
            model = json.loads(Path(path).read_text(encoding="utf-8"))["model"]
            if model.get("type") != "BPE":
                raise ValueError(f"its model is {model.get('type')!r}, not BPE")
            pairs = [m.split(" ", 1) if isinstance(m, str) else m for m in model["merges"]]
            merges = [(str(a), str(b)) for a, b in pairs]
            engine = Engine(models.BPE(model["vocab"], merges))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            raise DataError(f"{path}: not a byte-level BPE tokenizer.json ({err})") from None
        engine.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        engine.decoder = decoders.ByteLevel()
        return cls(engine)

    def __len__(self) -> int:
        return self.engine.get_vocab_size()

    def __repr__(self) -> str:
        return f"ByteLevelBPETokenizer(length(vocabulary)={len(self)})"

    def encode(
        self, text: str, *, max_length: int | None = None, add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        return self.wrap(
            self.engine.encode(text).ids,
            max_length,
            self.need("bos") if add_bos else None,
            self.need("eos") if add_eos else None,
        )

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.engine.encode_batch(list(texts))]

    def decode(self, ids: Iterable[int], *, skip_special: bool = True) -> str:
        ids = ids.tolist() if isinstance(ids, Tensor) else list(ids)
        if skip_special:
            ids = [i for i in ids if i not in self.special_ids()]
        return self.engine.decode(ids, skip_special_tokens=False)

    def token(self, i: int) -> str:
        return self.engine.id_to_token(i) or "?"

    def vocab_and_merges(self) -> tuple[dict[str, int], list[str]]:
        """GPT-2's two files' contents: the vocabulary and the merge rules, in order."""
        model = json.loads(self.engine.to_str())["model"]
        merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
        return model["vocab"], merges

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "engine": json.loads(self.engine.to_str())}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ByteLevelBPETokenizer:
        from tokenizers import Tokenizer as Engine

        return cls(Engine.from_str(json.dumps(data["engine"])))

"""The one tokenizer interface, and what every tokenizer shares (padding, save/load as JSON).

Every tokenizer (``WordTokenizer``, ``CharTokenizer``, ``BPETokenizer``) implements ``Tokenizer``:

* ``encode(text) -> list[int]`` and ``decode(ids) -> str``: text in, ids out and back;
* ``unk_id``, ``pad_id``, ``bos_id``, ``eos_id``: special ids (``None`` where a tokenizer has none);
* ``len(tokenizer)`` = ``vocab_size``; ``token(i)``: how id ``i`` is shown in plots and tables;
* ``to_dict()`` / ``save(path)``; ``registry.load_tokenizer`` reads any kind back.

Callers never ask which kind a tokenizer is. Shapes: B texts, T tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ..atomic import atomic_write_json
from ..errors import ConfigError


class Tokenizer:
    """The interface and what every tokenizer shares; a kind implements ``encode``, ``decode``, ``token``,
    ``__len__`` and ``to_dict`` (and may give ``fast_batch`` a vectorised path)."""

    kind = "base"
    unk_id: int | None = None
    pad_id: int | None = None
    bos_id: int | None = None
    eos_id: int | None = None
    mask_id: int | None = None

    def __len__(self) -> int:
        raise NotImplementedError

    def encode(
        self, text: str, *, max_length: int | None = None, add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        raise NotImplementedError

    def decode(self, ids: Iterable[int], *, skip_special: bool = True) -> str:
        raise NotImplementedError

    def token(self, i: int) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def vocab_size(self) -> int:
        return len(self)

    def shown(self, i: int) -> str:
        """Token ``i`` as people read it: its text (a byte-level piece decoded: ``" the"``, not ``"Ġthe"``),
        or its name for a special token and for a piece that is part of a character."""
        text = self.decode([i], skip_special=False)
        return text if text and "\ufffd" not in text else self.token(i)

    def special_ids(self) -> set[int]:
        """Pad, BOS, EOS (and mask) ids (never the unknown id: it stands for real text)."""
        ids = (self.pad_id, self.bos_id, self.eos_id, self.mask_id)
        return {i for i in ids if i is not None}

    def need(self, name: str) -> int:
        """The ``name`` ("pad", "bos", "eos") id, or a ``ConfigError`` saying this tokenizer has none."""
        value = getattr(self, f"{name}_id")
        if value is None:
            raise ConfigError(f"this {self.kind} tokenizer has no {name} token; create it with {name}=...")
        return value

    @staticmethod
    def wrap(ids: list[int], max_length: int | None, bos: int | None, eos: int | None) -> list[int]:
        """Add BOS/EOS and truncate so that the result (EOS included) fits ``max_length``."""
        if bos is not None:
            ids = [bos, *ids]
        if max_length is not None:
            ids = ids[: max_length - (1 if eos is not None else 0)]
        if eos is not None:
            ids = [*ids, eos]
        return ids

    def encode_many(self, texts: Sequence[str]) -> list[list[int]]:
        """Ids of many texts (a tokenizer may do this faster than one ``encode`` per text)."""
        return [self.encode(t) for t in texts]

    def encode_batch(
        self,
        texts: Sequence[str],
        max_length: int | None = None,
        *,
        pad_to: int | None = None,
        add_bos: bool = False,
        add_eos: bool = False,
    ) -> tuple[Tensor, Tensor]:
        """Padded ids ``(B, T)`` and the ``(B, T)`` bool mask of real tokens (``pad_to`` fixes ``T``)."""
        fast = None if add_bos or add_eos else self.fast_batch(texts, max_length, pad_to)
        if fast is not None:
            return fast
        rows = [self.encode(t, max_length=max_length, add_bos=add_bos, add_eos=add_eos) for t in texts]
        return pad_batch(rows, self.need("pad"), pad_to)

    def fast_batch(
        self, texts: Sequence[str], max_length: int | None, pad_to: int | None
    ) -> tuple[Tensor, Tensor] | None:
        """``encode_batch`` without BOS/EOS by a faster path giving the same ids, or ``None`` for none."""
        return None

    def save(self, path: str | Path) -> None:
        atomic_write_json(path, self.to_dict())


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

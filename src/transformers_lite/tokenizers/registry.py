"""Read any tokenizer back from the JSON its ``save`` wrote; the ``kind`` field says which class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..atomic import read_json
from ..errors import RunError
from .base import Tokenizer
from .bpe import BPETokenizer
from .byte_bpe import ByteLevelBPETokenizer
from .char import CharTokenizer
from .word import WordTokenizer

KINDS: dict[str, Any] = {
    "word": WordTokenizer,
    "char": CharTokenizer,
    "bpe": BPETokenizer,
    "byte-bpe": ByteLevelBPETokenizer,
}


def tokenizer_from_dict(data: dict[str, Any], origin: object = "tokenizer") -> Tokenizer:
    """Rebuild a tokenizer from its ``to_dict`` output."""
    kind = data.get("kind")
    if kind not in KINDS:
        raise RunError(f"{origin}: unknown tokenizer kind {kind!r}; expected one of {', '.join(KINDS)}")
    return KINDS[kind].from_dict(data)


def load_tokenizer(path: str | Path, upgrade=None) -> Tokenizer:  # noqa: ANN001
    """Read a tokenizer JSON; a damaged file is a ``RunError`` naming it.

    ``upgrade(data) -> data`` may rewrite an older file format first (see ``runs.legacy``).
    """
    path = Path(path)
    data = read_json(path, "tokenizer file", hint="; retrain, or restore it from a backup")
    if not isinstance(data, dict):
        raise RunError(f"{path}: damaged tokenizer file (not a JSON object)")
    if upgrade is not None:
        data = upgrade(data)
    try:
        return tokenizer_from_dict(data, path)
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, RunError):
            raise
        raise RunError(f"{path}: damaged tokenizer file ({err})") from None

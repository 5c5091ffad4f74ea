"""Pretrained word vectors in GloVe's text format, for starting an embedding table from them.

Post 001 starts its translator from GloVe vectors "for both the input and output vectors". A vectors
file holds one word per line followed by its numbers, separated by spaces (``the 0.418 0.24968 ...``);
word2vec's text format is the same with a first line of two integers (the number of words and the
dimension), which is skipped. The file is read as a stream and only the wanted words are kept, so a
400,000-word file costs memory only for the vocabulary at hand.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ..errors import DataError
from .formats import check_file, compression_of


def read_word_vectors(path: str | Path, words: Iterable[str]) -> tuple[dict[str, Tensor], int]:
    """The vectors ``(C,)`` of those of ``words`` that the file ``path`` holds, and the file's dimension C.

    Every line must hold a word and C numbers (C set by the first line); a line that does not is a
    ``DataError`` naming it. A word listed twice keeps its first vector, as GloVe's own readers do.
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"word vectors file not found: {path}")
    path = check_file(path)  # a link to nothing, a link loop, a folder: named as such
    wanted = set(words)
    found: dict[str, Tensor] = {}
    dim = 0
    with open(path, "rb") as fh:  # compressed or not, by the magic bytes (``formats``), read as a stream
        kind = compression_of(fh.read(8))
    if kind == "zip":
        raise DataError(f"{path}: a zip archive; give the vectors file itself, or gzip/bzip2/xz-compressed")
    opener: Any = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}.get(kind or "", open)
    with opener(path, "rt", encoding="utf-8", errors="strict") as lines:
        try:
            for number, line in enumerate(lines, 1):
                parts = line.rstrip("\n").rstrip(" ").split(" ")
                if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    continue  # word2vec's header: words, dimension
                if len(parts) < 2 or not parts[0]:
                    raise DataError(f"{path}:{number}: expected a word and its numbers separated by spaces")
                if not dim:
                    dim = len(parts) - 1
                elif len(parts) - 1 != dim:
                    raise DataError(
                        f"{path}:{number}: {len(parts) - 1} numbers where the file's first vector has {dim}"
                    )
                if parts[0] in wanted and parts[0] not in found:
                    try:
                        vector = torch.tensor([float(x) for x in parts[1:]], dtype=torch.float32)  # (C,)
                    except ValueError:
                        vector = torch.tensor([float("nan")])
                    if not bool(torch.isfinite(vector).all()):
                        raise DataError(
                            f"{path}:{number}: the vector of {parts[0]!r} holds a value that is not a finite number"
                        )
                    found[parts[0]] = vector
        except UnicodeDecodeError as err:
            raise DataError(f"{path}: not UTF-8 text ({err.reason}); give the vectors in GloVe's text format") from None
    if not dim:
        raise DataError(f"{path}: no vectors in the file")
    return found, dim

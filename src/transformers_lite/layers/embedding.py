"""Token embedding and position encodings.

Shapes: B batch, T time, C channels (model dimension), V vocabulary, L maximum length.
The posts' ``Embed`` stores a ``(C, V)`` table and indexes columns; ours is ``(V, C)`` and indexes
rows, so a batch of ids ``(B, T)`` becomes ``(B, T, C)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class TokenEmbedding(nn.Module):
    """A lookup table ``(V, C)``. Its gradient is a scatter-add into the rows of the ids used, so a
    token appearing several times in a batch accumulates the gradients of all its occurrences."""

    def __init__(self, vocab_size: int, dim: int, init_std: float = 0.02) -> None:
        super().__init__()
        if vocab_size < 1 or dim < 1:
            raise ValueError(f"vocab_size and dim must be >= 1, got vocab_size={vocab_size}, dim={dim}")
        self.vocab_size, self.dim = vocab_size, dim
        # init_std: 0.02 for the GPT (GPT-2's choice); 1 for the classifier, whose embeddings are added to a
        # unit-amplitude sinusoidal table (the post's Embed starts from a unit normal too)
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) * init_std)  # (V, C)

    def extra_repr(self) -> str:
        return f"{self.vocab_size} => {self.dim}"

    def forward(self, ids: Tensor, check: bool = True) -> Tensor:
        """``ids (B, T)`` -> ``(B, T, C)``. ``check`` validates the id range with a clear error."""
        if check:
            check_ids(ids, self.vocab_size)
        return F.embedding(ids, self.weight)  # (B, T) -> (B, T, C)


def check_ids(ids: Tensor, vocab_size: int) -> None:
    """A ``ValueError`` naming the first id outside ``0 .. vocab_size - 1``.

    Skipped inside ``torch.compile`` (training, whose ids come from the run's own tokenizer): reading
    the range back is a graph break there, and on a GPU a wait for the device at every step."""
    if ids.numel() and not torch.compiler.is_compiling():
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= vocab_size:
            raise ValueError(f"token id {lo if lo < 0 else hi} is out of range for a vocabulary of {vocab_size}")


class BigramEmbedding(nn.Module):
    """One vector per pair (previous token, token), hashed into ``buckets`` rows: ``(B, T) -> (B, T, C)``.

    Added to the word embeddings, it lets a one-block encoder read two-word phrases ("not good",
    "waste of") directly, as the n-gram embeddings of fastText and N-Grammer do. The first token's
    "previous token" is a start marker (id ``vocab_size``). Pairs are hashed, so distinct pairs may
    share a row; with ~100,000 rows and a few hundred thousand pairs in the data that costs little.
    The table starts at zero, so an untrained bigram table leaves the model as it was.
    """

    MULTIPLIER = 1_000_003  # a prime: pairs (p, t) spread over the rows as (p * MULTIPLIER + t) mod buckets

    def __init__(self, buckets: int, dim: int, vocab_size: int) -> None:
        super().__init__()
        if buckets < 1 or dim < 1 or vocab_size < 1:
            raise ValueError(f"buckets, dim and vocab_size must be >= 1, got {buckets}, {dim}, {vocab_size}")
        self.buckets, self.dim, self.vocab_size = buckets, dim, vocab_size
        self.weight = nn.Parameter(torch.zeros(buckets, dim))  # (buckets, C)

    def extra_repr(self) -> str:
        return f"{self.buckets} buckets => {self.dim}"

    def rows(self, ids: Tensor) -> Tensor:
        """The table row of each position's pair: ``(B, T)`` ids -> ``(B, T)`` rows."""
        start = torch.full_like(ids[:, :1], self.vocab_size)  # (B, 1): the start marker
        previous = torch.cat([start, ids[:, :-1]], dim=1)  # (B, T): the token before each position
        return (previous * self.MULTIPLIER + ids) % self.buckets

    def forward(self, ids: Tensor) -> Tensor:
        return F.embedding(self.rows(ids), self.weight)  # (B, T) -> (B, T, C)


def sinusoid_table(dim: int, max_length: int, base: float = 10000.0) -> Tensor:
    """The post's table, row-major: ``PE[j, 2i] = sin(j / base^(2i/C))``, ``PE[j, 2i+1] = cos(...)``.

    Positions ``j`` run from 1 to ``max_length`` exactly as in post 000 (Julia counts from 1), so
    row 0 of our ``(L, C)`` table equals column 1 of the post's ``(C, L)`` matrix.
    """
    if dim % 2 != 0:
        raise ValueError(f"sinusoidal position encoding needs an even dim, got {dim}")
    pos = torch.arange(1, max_length + 1, dtype=torch.float64)[:, None]  # (L, 1)
    rows = torch.arange(0, dim, 2, dtype=torch.float64)[None, :]  # (1, C/2): the even rows 2i
    angle = pos / base ** (rows / dim)  # (L, C/2)
    table = torch.empty(max_length, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.float()  # (L, C)


class SinusoidalPositionEncoding(nn.Module):
    """Fixed sine/cosine encoding precomputed up to ``max_length`` as a non-trainable buffer.

    ``forward(T)`` returns the first ``T`` rows ``(T, C)``; adding them is the caller's job, as in
    the post. The buffer is not saved with the weights (it is rebuilt from the config).
    """

    weight: Tensor  # the buffer, (L, C)

    def __init__(self, dim: int, max_length: int = 1000) -> None:
        super().__init__()
        self.dim, self.max_length = dim, max_length
        self.register_buffer("weight", sinusoid_table(dim, max_length), persistent=False)  # (L, C)

    def extra_repr(self) -> str:
        return f"{self.dim}, max_length={self.max_length}"

    def forward(self, seq_length: int, offset: int = 0) -> Tensor:
        return _rows(self.weight, seq_length, offset, "the maximum position encoding length")  # (T, C)


class LearnedPositionEmbedding(nn.Module):
    """A trainable ``(L, C)`` table of positions (post 004); ``L`` is the context length."""

    def __init__(self, max_length: int, dim: int) -> None:
        super().__init__()
        self.max_length, self.dim = max_length, dim
        self.weight = nn.Parameter(torch.randn(max_length, dim) * 0.02)  # (L, C)

    def extra_repr(self) -> str:
        return f"{self.max_length} => {self.dim}"

    def forward(self, seq_length: int, offset: int = 0) -> Tensor:
        return _rows(self.weight, seq_length, offset, "the context length")  # (T, C)


def _rows(table: Tensor, seq_length: int, offset: int, limit: str) -> Tensor:
    """Rows ``offset .. offset + seq_length`` of a ``(L, C)`` position table, or a ``ValueError``."""
    if offset + seq_length > table.shape[0]:
        raise ValueError(
            f"sequence length {offset + seq_length} exceeds {limit} {table.shape[0]}; "
            "truncate the input (or crop it to the last max_length tokens)"
        )
    return table[offset : offset + seq_length]  # (T, C)


__all__ = [
    "TokenEmbedding",
    "BigramEmbedding",
    "SinusoidalPositionEncoding",
    "LearnedPositionEmbedding",
    "sinusoid_table",
]

"""Token embedding and position encodings.

Shapes: B batch, T time, C channels (model dimension), V vocabulary, L maximum length.
The posts' ``Embed`` stores a ``(C, V)`` table and indexes columns; ours is ``(V, C)`` and indexes
rows, so a batch of ids ``(B, T)`` becomes ``(B, T, C)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .steps import Count, Step, SummaryRow


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

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        return [(0, "", f"Embedding({self.vocab_size} => {self.dim})", count([self.weight]), 0)]

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
    ``buckets=None`` gives the exact table of a small vocabulary (a character model's): one row per pair,
    ``previous · V + token``, (V + 1) · V rows (V² pairs, and V for a first token after the start marker).
    The table starts at zero, so an untrained bigram table leaves the model as it was.
    """

    MULTIPLIER = 1_000_003  # a prime: pairs (p, t) spread over the rows as (p * MULTIPLIER + t) mod buckets

    def __init__(self, buckets: int | None, dim: int, vocab_size: int) -> None:
        super().__init__()
        self.exact = buckets is None
        rows = (vocab_size + 1) * vocab_size if buckets is None else buckets
        if rows < 1 or dim < 1 or vocab_size < 1:
            raise ValueError(f"buckets, dim and vocab_size must be >= 1, got {buckets}, {dim}, {vocab_size}")
        self.buckets, self.dim, self.vocab_size = rows, dim, vocab_size
        self.weight = nn.Parameter(torch.zeros(rows, dim))  # (buckets, C)

    def extra_repr(self) -> str:
        return f"{self.buckets} {'rows, exact' if self.exact else 'buckets'} => {self.dim}"

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        return [(0, "", f"BigramEmbedding({self.buckets} pairs => {self.dim})", count([self.weight]), 0)]

    def rows(self, ids: Tensor, before: Tensor | None = None) -> Tensor:
        """The table row of each position's pair: ``(B, T)`` ids -> ``(B, T)`` rows. ``before (B, 1)``: the
        token before the first (decoding with a cache feeds one token at a time); None: the start marker."""
        start = torch.full_like(ids[:, :1], self.vocab_size) if before is None else before  # (B, 1)
        previous = torch.cat([start, ids[:, :-1]], dim=1)  # (B, T): the token before each position
        if self.exact:
            return previous * self.vocab_size + ids
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

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        return [(0, "", f"PositionEncoding({self.dim}, max_length={self.max_length})", 0, self.weight.numel())]

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

    def summary_rows(self, count: Count) -> list[SummaryRow]:
        return [(0, "", f"Embedding({self.max_length} => {self.dim})", count([self.weight]), 0)]

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


def input_steps(*, scale: float = 1.0, position: str | None = "learned", pairs: bool = False) -> dict[str, Step]:
    """The steps of reading tokens into a stack's input, as configured: the token rows (times ``scale``:
    a translator's √C), the ``position`` rows (``learned``, ``sinusoidal``, ``zero`` for a table of
    zeros, or ``None`` when the positions act inside attention) and a classifier's word ``pairs``. The posts
    read unscaled rows (post 004's ``m.weight[:, x]``) and add a learned (post 004) or sinusoidal (post 000)
    position table; anything else is not in the posts."""
    scaled = scale != 1.0
    times = "√C · " if scaled else ""
    value = f", √C = {scale:.4g}" if scaled else ""
    steps = {
        "tokens": Step("tokens", "T", "ids = tokenizer(text)", "indices = indexer(tokens)", "the ids the model reads"),
        "embedding": Step(
            "embedding",
            "TC",
            f"{times}E[ids]: row id of the token table E (V × C){value}",
            None if scaled else "E[:, ids]",
            "one learned vector per token",
            factor=scale if scaled else None,
            computes="rows of the token table E, one per token id" + (f", times √C = {scale:.4g}" if scaled else ""),
        ),
    }
    terms = [f"{times}E[ids]"]
    if position is not None:
        ours, post, meaning, words = {
            "learned": (
                "PE[t]: row t of a learned table (L × C)",
                "PE[:, t]",
                "a learned vector per position",
                "rows of a learned position table, one per position",
            ),
            "sinusoidal": (
                "PE[t, 2i] = sin(t / 10000^(2i/C)), PE[t, 2i+1] = cos(t / 10000^(2i/C)), t from 1",
                "PE(2i + 1, j) = sin(j/(10⁴)^(2i/d)), PE(2i + 2, j) = cos(j/(10⁴)^(2i/d))",
                "a fixed sine/cosine vector per position",
                "rows of a fixed table of sines and cosines, one per position",
            ),
            "zero": (
                "PE[t] = 0: no position encoding",
                None,
                "nothing: the model reads the tokens as a bag",
                "rows of a table of zeros: the positions are not encoded",
            ),
        }[position]
        steps["position"] = Step("position", "TC", ours, post, f"where each token is: {meaning}, added", computes=words)
        terms.append("PE[t]")
    if pairs:
        steps["pairs"] = Step(
            "embedding",
            "TC",
            "B[hash(previous id, id)]: a row per two-word phrase",
            None,
            "a vector per two-word phrase, added",
            computes="rows of a hashed table, one per pair of words (the previous and this one)",
        )
        terms.append("B[pairs]")
    in_posts = not scaled and not pairs and position in ("learned", "sinusoidal")
    steps["input"] = Step(
        "sum",
        "TC",
        "X = " + " + ".join(terms),
        "X = E[:, ids] .+ PE" if in_posts else None,
        "what the first block reads (the sum of the steps above it)",
        computes=f"the terms added: {' + '.join(terms)}" if len(terms) > 1 else "the token rows, nothing added",
    )
    return steps


__all__ = [
    "TokenEmbedding",
    "BigramEmbedding",
    "SinusoidalPositionEncoding",
    "LearnedPositionEmbedding",
    "sinusoid_table",
    "input_steps",
]

"""Vectorised words -> ids for a whole corpus, without a Python object per token.

``encode_corpus`` gives exactly what ``WordTokenizer.encode(text, max_length=...)`` gives for each text
with post 000's split (a test checks this on every real review), but 100,000 reviews take a fraction of
a second:

1. Texts become one byte buffer, reviews separated by NUL; a NUL inside a review becomes a space first
   (NUL is not a word character, so its words are the same), else the words after it would be counted
   in the next review. ASCII reviews are lowercased and
   stripped of ' and ` by one ``bytes.translate``; the others go through ``simplify`` (NFD, marks
   removed) and have their non-word runs replaced by a space first.
2. Words are the maximal runs of word bytes, found with NumPy; ``\\w\\w+\\b`` is exactly "runs of
   two or more word characters".
3. Each run is hashed with a 64-bit polynomial hash from a prefix sum (``H[e] - H[s]`` scaled by
   ``P^-s``, computed a megabyte at a time) and looked up in an open-addressing table of the
   vocabulary's hashes; a match also requires equal byte length, so a false match needs a 64-bit
   collision of two same-length words.
"""

from __future__ import annotations

import re

import numpy as np

from .text import char_class, simplify

_SEP = "\x00"  # between reviews in the joined buffer; _TABLE keeps it, _encode_buffer counts it
_P = 1099511628211  # odd, so invertible modulo 2**64
_P_INV = pow(_P, -1, 1 << 64)


def _ascii_table() -> bytes:
    table = bytearray(b" " * 256)
    for c in b"abcdefghijklmnopqrstuvwxyz0123456789_":
        table[c] = c
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[c] = c + 32
    table[0] = 0
    for c in range(128, 256):  # UTF-8 bytes of characters already known to be word characters
        table[c] = c
    return bytes(table)


_TABLE = _ascii_table()


_POWERS: dict[int, np.ndarray] = {}
_CHUNK = 1 << 20  # bytes hashed at a time: the power tables stay small and in cache


def _powers(base: int, n: int) -> np.ndarray:
    """``base**k mod 2**64`` for ``k < n`` (uint64 arithmetic wraps), cached and grown on demand."""
    cached = _POWERS.get(base)
    if cached is None or len(cached) < n:
        out = np.full(max(n, _CHUNK + 4096), base, dtype=np.uint64)
        out[0] = 1
        cached = _POWERS[base] = np.cumprod(out, dtype=np.uint64)
    return cached[:n]


def _hash_runs(a: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Polynomial hash of each byte run ``a[s:e]``: ``sum a[s+j] P^j mod 2**64``, chunk by chunk."""
    out = np.empty(len(starts), dtype=np.uint64)
    bounds = np.searchsorted(starts, np.arange(0, len(a) + _CHUNK, _CHUNK))
    for i0, i1 in zip(bounds[:-1], bounds[1:]):
        if i0 == i1:
            continue
        lo, hi = starts[i0], ends[i1 - 1]
        local = a[lo:hi].astype(np.uint64)
        local *= _powers(_P, hi - lo)
        prefix = np.empty(hi - lo + 1, dtype=np.uint64)
        prefix[0] = 0
        np.cumsum(local, out=prefix[1:])
        s, e = starts[i0:i1] - lo, ends[i0:i1] - lo
        out[i0:i1] = (prefix[e] - prefix[s]) * _powers(_P_INV, hi - lo)[s]
    return out


def _word_hash(word: bytes) -> int:
    h, p = 0, 1
    for c in word:
        h = (h + c * p) % (1 << 64)
        p = (p * _P) % (1 << 64)
    return h


class _VocabIndex:
    """Open-addressing hash table of the vocabulary's word hashes (load factor <= 1/8)."""

    def __init__(self, lookup: dict[str, int]) -> None:
        words = [(w.encode("utf-8"), i) for w, i in lookup.items()]
        size = 1 << max(4, (8 * len(words)).bit_length())
        self.mask = size - 1
        self.hashes = np.zeros(size, dtype=np.uint64)
        self.lengths = np.full(size, -1, dtype=np.int64)  # -1 marks an empty slot
        self.ids = np.zeros(size, dtype=np.int64)
        self.probes = 1
        for word, i in words:
            h = _word_hash(word)
            slot, n = h & self.mask, 1
            while self.lengths[slot] != -1:
                slot, n = (slot + 1) & self.mask, n + 1
            self.hashes[slot], self.lengths[slot], self.ids[slot] = h, len(word), i
            self.probes = max(self.probes, n)

    def lookup(self, hashes: np.ndarray, nbytes: np.ndarray, unk: int) -> np.ndarray:
        out = np.full(len(hashes), unk, dtype=np.int64)
        todo = np.arange(len(hashes))
        slot = (hashes & np.uint64(self.mask)).astype(np.int64)
        for _ in range(self.probes):
            hit = (self.hashes[slot] == hashes[todo]) & (self.lengths[slot] == nbytes[todo])
            out[todo[hit]] = self.ids[slot[hit]]
            more = ~hit & (self.lengths[slot] != -1)  # occupied by another word: probe the next slot
            todo, slot = todo[more], (slot[more] + 1) & self.mask
            if not len(todo):
                break
        return out


_CACHE: list = []  # [(lookup, vocabulary length, index)]: one entry, holding the lookup dict itself


def _vocab_index(lookup: dict[str, int]) -> _VocabIndex:
    """The hash table for ``lookup``, rebuilt when the dict (or its size) changes. The cache keeps a
    reference to the dict: keying by ``id()`` alone could match a new dict that reuses a collected one's id."""
    if not _CACHE or _CACHE[0][0] is not lookup or _CACHE[0][1] != len(lookup):
        _CACHE[:] = [(lookup, len(lookup), _VocabIndex(lookup))]
    return _CACHE[0][2]


def _encode_buffer(buf: bytes, n_docs: int, vocab: _VocabIndex, unk: int, max_length: int):
    a = np.frombuffer(buf, dtype=np.uint8)
    word = (a != 32) & (a != 0)
    edges = np.diff(np.concatenate(([False], word, [False])).view(np.int8))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    nbytes = ends - starts
    if (a >= 128).any():  # count characters, not bytes: UTF-8 continuation bytes are 0b10xxxxxx
        lead = np.concatenate(([0], np.cumsum((a & 0xC0) != 0x80)))
        nchars = lead[ends] - lead[starts]
    else:
        nchars = nbytes
    keep = nchars >= 2
    starts, ends, nbytes = starts[keep], ends[keep], nbytes[keep]
    hashes = _hash_runs(a, starts, ends)  # (tokens,)
    ids = vocab.lookup(hashes, nbytes, unk)
    doc = np.cumsum(a == 0, dtype=np.int32)[starts]  # separators before each token = its review
    first = np.full(n_docs, len(doc), dtype=np.int64)
    np.minimum.at(first, doc, np.arange(len(doc))) if len(doc) < 1000 else None
    if len(doc) >= 1000:  # tokens are in order, so a review's first token follows a change of doc
        change = np.flatnonzero(np.diff(doc, prepend=-1))
        first[doc[change]] = change
    rank = np.arange(len(doc)) - first[doc]
    within = rank < max_length
    lengths = np.bincount(doc[within], minlength=n_docs)
    return doc[within], rank[within], ids[within], lengths


def encode_corpus(
    texts: list[str], lookup: dict[str, int], unk_id: int, pad_id: int, max_length: int, width: int | None = None
):  # noqa: ANN201
    """``(ids (N, T) int64 padded with ``pad_id``, lengths (N,))`` for ``texts``; words missing from
    ``lookup`` become ``unk_id``, and each text keeps its first ``max_length`` words."""
    texts = [t.replace(_SEP, " ") for t in texts]  # the separator below must not occur inside a text
    ascii_idx = [i for i, t in enumerate(texts) if t.isascii()]
    other_idx = [i for i, t in enumerate(texts) if not t.isascii()]
    vocab = _vocab_index(lookup)
    parts = []
    if ascii_idx:
        buf = _SEP.join(texts[i] for i in ascii_idx).encode("ascii").translate(_TABLE, b"'`")
        parts.append((np.array(ascii_idx), _encode_buffer(buf, len(ascii_idx), vocab, unk_id, max_length)))
    if other_idx:
        joined = simplify(_SEP.join(texts[i] for i in other_idx))
        # non-ASCII characters that are not word characters (\w = isalnum or "_") become spaces, so
        # every byte >= 128 left belongs to a word; ASCII non-word bytes are handled by _TABLE
        spaces = [c for c in set(joined) if not c.isascii() and not c.isalnum()]
        if spaces:
            joined = re.sub(char_class(spaces), " ", joined)
        buf = joined.encode("utf-8").translate(_TABLE)
        parts.append((np.array(other_idx), _encode_buffer(buf, len(other_idx), vocab, unk_id, max_length)))
    lengths = np.zeros(len(texts), dtype=np.int64)
    for rows, (_, _, _, lens) in parts:
        lengths[rows] = lens
    width = int(lengths.max(initial=0)) if width is None else width
    out = np.full((len(texts), width), pad_id, dtype=np.int64)
    for rows, (doc, rank, ids, _) in parts:
        out[rows[doc], rank] = ids
    return out, lengths

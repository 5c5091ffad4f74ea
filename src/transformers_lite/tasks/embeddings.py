"""Starting an embedding table from something better than noise: PPMI co-occurrence vectors of the
training texts, or pretrained word vectors from a file.

``ppmi_init`` serves the classifier (one table per ensemble member, each from its own random draw) and
the pretraining encoder. Counting uses each text at full length (cut at ``PPMI_MAX_TOKENS``), not the
model's ``max_length``; labels are never read.

``token_vectors`` + ``vectors_init``: the rows of the tokens whose text is a word of a GloVe-format
file (``data.vectors``; the word as written, else in lower case), scaled so that they have the
standard deviation the table already has (the position encoding keeps its relative weight, as with
PPMI); the other rows keep their start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from .. import validate
from ..data.cooccurrence import ppmi_vectors
from ..data.vectors import read_word_vectors
from ..errors import ConfigError
from ..settings import setting
from ..tokenizers import Tokenizer, WordTokenizer, load_vocabulary, select_vocabulary
from ..tokenizers.text import SPLITS

PPMI_MAX_TOKENS = 2048  # longer texts are cut here when counting co-occurrences
EMBEDDING_INITS = ("random", "ppmi")


@dataclass(frozen=True, kw_only=True)
class WordSettings:
    """The settings of a word vocabulary and of how its embedding table starts: what the classifier's and
    the pretraining encoder's data settings share (keyword-only, after each family's own settings)."""

    vocab: str | None = setting(
        "vocabulary file, one word per line", None, none="built from the training texts", path=True
    )
    min_df: int = setting(
        "minimum document frequency of a word in a vocabulary built from the training texts",
        2,
        applies=("vocab", (None,)),
    )
    word_split: str = setting(
        "how a text becomes words: words (post 000: lowercased words of two or more letters or digits, accents "
        "and punctuation dropped) or punct (every lowercased word and every punctuation mark a token: keeps what "
        "punctuation tells, such as a definition's ':' or a quotation's '--'); a classifier fine-tuned with "
        "--init-from reads as its pretrained run does",
        "words",
        choices=tuple(SPLITS),
    )
    embedding_init: str = setting(
        "how the embedding table starts: random N(0, 1) (post 000) or PPMI co-occurrence vectors of the training texts",
        "random",
        choices=EMBEDDING_INITS,
    )
    embedding_window: int = setting(
        "co-occurrence window (tokens) for embedding_init=ppmi", 10, applies=("embedding_init", ("ppmi",))
    )

    def __post_init__(self) -> None:
        validate.flags(self)
        for name in ("min_df", "embedding_window"):
            validate.integer(name, getattr(self, name))
        validate.choice("embedding_init", self.embedding_init, EMBEDDING_INITS)
        validate.choice("word_split", self.word_split, tuple(SPLITS))

    def tokenizer(self, texts: Sequence[str], **specials: str) -> WordTokenizer:
        """The word tokenizer these settings describe: the ``vocab`` file's words, or the words of ``texts``
        found in at least ``min_df`` of them, cut by ``word_split``; ``specials``: its pad/mask tokens."""
        split = self.word_split
        words = load_vocabulary(self.vocab) if self.vocab else select_vocabulary(texts, self.min_df, split=split)
        return WordTokenizer(words, "[UNK]", split=split, **specials)


@torch.no_grad()
def ppmi_init(
    tables: Sequence[nn.Parameter], tokenizer: Tokenizer, texts: list[str], window: int, seeds: Sequence[int]
) -> None:
    """Overwrite each ``(V, C)`` table with PPMI vectors of ``texts`` (``data.cooccurrence``), table ``i``
    with the SVD drawn from random seed ``seeds[i]``; the co-occurrences are counted once for all."""
    vocab_size, dim = tables[0].shape
    ids, valid = tokenizer.encode_batch(texts, PPMI_MAX_TOKENS)
    draws = ppmi_vectors(ids, valid, vocab_size, dim, window=window, seeds=list(seeds))  # M x (V, C)
    for table, vectors in zip(tables, draws):
        table.copy_(vectors)


def token_vectors(tokenizer: Tokenizer, path: str | Path, dim: int) -> tuple[Tensor, Tensor, str]:
    """``(ids (N,), rows (N, C), note)``: the tokens of ``tokenizer`` whose text is a word of the vectors
    file ``path`` (special tokens and the unknown word left out), their vectors, and a line saying how
    many were found. The file's dimension must be the model's ``dim``."""
    skip = tokenizer.special_ids() | ({tokenizer.unk_id} if tokenizer.unk_id is not None else set())
    texts = {i: tokenizer.shown(i).strip() for i in range(len(tokenizer)) if i not in skip}
    found, file_dim = read_word_vectors(path, {w for t in texts.values() if t for w in (t, t.lower())})
    if file_dim != dim:
        raise ConfigError(
            f"{path} holds vectors of {file_dim} numbers but the model's dim is {dim}: train with --set "
            f"dim={file_dim} (n_heads must divide it), or give vectors of {dim}"
        )
    pairs = [(i, found.get(t, found.get(t.lower()))) for i, t in texts.items() if t]
    kept = [(i, v) for i, v in pairs if v is not None]
    ids = torch.tensor([i for i, _ in kept], dtype=torch.long)  # (N,)
    rows = torch.stack([v for _, v in kept]) if kept else torch.zeros(0, dim)  # (N, C)
    note = f"word vectors: {len(kept):,} of {len(texts):,} tokens found in {path}; the others keep their start"
    return ids, rows, note


@torch.no_grad()
def vectors_init(tables: Sequence[nn.Parameter], ids: Tensor, rows: Tensor) -> None:
    """Write ``rows (N, C)`` into rows ``ids`` of each ``(V, C)`` table, scaled to the table's standard
    deviation."""
    if not len(ids):
        return
    spread = float(rows.std(unbiased=False))
    for table in tables:
        scale = float(table.std(unbiased=False)) / spread if spread > 0 else 1.0
        table[ids] = rows.to(table.dtype) * scale  # (N, C) into (V, C)

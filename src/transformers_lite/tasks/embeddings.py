"""Starting an embedding table from the data: PPMI co-occurrence vectors of the training texts.

One function for the classifier (one table per ensemble member, each from its own random draw) and
the pretraining encoder. Counting uses each text at full length (cut at ``PPMI_MAX_TOKENS``), not the
model's ``max_length``; labels are never read.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from ..data.cooccurrence import ppmi_vector_draws
from ..tokenizers import Tokenizer

PPMI_MAX_TOKENS = 2048  # longer texts are cut here when counting co-occurrences


@torch.no_grad()
def ppmi_init(
    tables: Sequence[nn.Parameter], tokenizer: Tokenizer, texts: list[str], window: int, seeds: Sequence[int]
) -> None:
    """Overwrite each ``(V, C)`` table with PPMI vectors of ``texts`` (``data.cooccurrence``), table ``i``
    with the SVD drawn from random seed ``seeds[i]``; the co-occurrences are counted once for all."""
    vocab_size, dim = tables[0].shape
    ids, valid = tokenizer.encode_batch(texts, PPMI_MAX_TOKENS)
    draws = ppmi_vector_draws(ids, valid, vocab_size, dim, window=window, seeds=list(seeds))  # M x (V, C)
    for table, vectors in zip(tables, draws):
        table.copy_(vectors)

"""Review classifier (seed 000): embedding (+ optional bigram vectors) -> position encoding ->
encoder blocks -> head.

Shapes: B batch, T tokens (at most ``max_length``), C channels, K labels.
"""

from __future__ import annotations

from torch import Tensor, nn

from ..config import ClassifierConfig
from ..layers import BigramEmbedding, MeanPoolHead, SeedHead
from .encoder import build_encoder, check_inputs, run_encoder


class TransformerClassifier(nn.Module):
    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        self.config = c = config
        build_encoder(self, c)  # embedding, position_encoding, input_dropout, blocks, final_norm
        if c.head == "seed":
            self.head: nn.Module = SeedHead(c.dim, c.max_length, c.n_labels)
        else:
            self.head = MeanPoolHead(c.dim, c.n_labels, c.head_dropout)
        # beyond the seeds: a hashed table of word pairs added to the word embeddings (0 buckets: none)
        self.bigram_embedding = BigramEmbedding(c.bigram_buckets, c.dim, c.vocab_size) if c.bigram_buckets else None

    def forward(self, ids: Tensor, valid: Tensor | None = None) -> Tensor:
        """``ids (B, T)``, ``valid (B, T)`` bool (True = real token) -> logits ``(B, K)``.

        When the config has a ``pad_id`` and no ``valid`` is given, it is derived from the ids.
        """
        ids, valid = check_inputs(ids, valid, self.config.max_length, self.config.pad_id)
        bigrams = None if self.bigram_embedding is None else self.bigram_embedding(ids)  # (B, T, C)
        x = run_encoder(self, ids, valid, extra=bigrams)  # (B, T, C)
        return self.head(x, valid)  # (B, K)

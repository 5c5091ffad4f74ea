"""Review classifier (post 000): embedding (+ optional word-pair vectors) -> position encoding ->
encoder blocks -> head.

Shapes: B batch, T tokens (at most ``max_length``), C channels, K labels. Traced steps: the
encoder's (``encoder.*``), ``bigram_embedding`` and the head's (``head.*``).
"""

from __future__ import annotations

from torch import Tensor, nn

from ..config import ClassifierConfig
from ..layers import NO_TRACE, BigramEmbedding, FlattenHead, MeanPoolHead, Trace
from ..layers.steps import Step
from .encoder import check_inputs, encoder_of

LOGITS = {"logits": Step("identity", "K", "z: the head's logits", "z", "the model's class scores")}


class TransformerClassifier(nn.Module):
    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        self.config = c = config
        self.encoder = encoder_of(c)
        if c.head == "flatten":
            self.head: nn.Module = FlattenHead(c.dim, c.max_length, c.n_labels)
        else:
            self.head = MeanPoolHead(c.dim, c.n_labels, c.head_dropout)
        # beyond the posts: a hashed table of word pairs added to the word embeddings (0 buckets: none)
        self.bigram_embedding = BigramEmbedding(c.bigram_buckets, c.dim, c.vocab_size) if c.bigram_buckets else None

    def forward(self, ids: Tensor, valid: Tensor | None = None, *, trace: Trace = NO_TRACE) -> Tensor:
        """``ids (B, T)``, ``valid (B, T)`` bool (True = real token) -> logits ``(B, K)``.

        When the config has a ``pad_id`` and no ``valid`` is given, it is derived from the ids.
        """
        ids, valid = check_inputs(ids, valid, self.config.max_length, self.config.pad_id)
        pairs = self.bigram_embedding
        rows = None if pairs is None else (pairs.rows(ids), pairs.weight)  # (B, T) rows of the (buckets, C) table
        x = self.encoder(ids, valid, extra=rows, trace=trace.at("encoder"))  # (B, T, C)
        logits = self.head(x, valid, trace.at("head"))  # (B, K)
        return trace.declare(LOGITS)("logits", logits, logits)

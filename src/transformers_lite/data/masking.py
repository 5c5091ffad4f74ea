"""Sequences and masked batches for pretraining an encoder on unlabelled text.

Masked objective (BERT): in every batch ``mask_prob`` of the real tokens are chosen; of those 80 %
become ``[MASK]``, 10 % a random word and 10 % stay, and the targets are the original words at the
chosen positions (``IGNORE`` elsewhere). Causal objective: every position's target is the next word.

Shapes: B batch, T tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..tokenizers import Tokenizer

IGNORE = -100  # positions without a target
FIXED_MASKS_SEED = 12_345  # validation masks are drawn once from this seed, so scores compare across steps


@dataclass(frozen=True)
class Masking:
    """How a tokenizer's ids become model inputs and targets for ``objective``."""

    pad_id: int
    mask_id: int
    first_word: int  # the first id a random replacement may take: after the unknown word and the specials
    vocab_size: int
    objective: str = "masked"
    mask_prob: float = 0.15

    @classmethod
    def of(cls, tokenizer: Tokenizer, objective: str = "masked", mask_prob: float = 0.15) -> Masking:
        if tokenizer.mask_id is None or tokenizer.pad_id is None:
            raise ValueError("the tokenizer needs [PAD] and [MASK] tokens for pretraining")
        unknown = set() if tokenizer.unk_id is None else {tokenizer.unk_id}
        first = max(tokenizer.special_ids() | unknown) + 1
        return cls(tokenizer.pad_id, tokenizer.mask_id, first, len(tokenizer), objective, mask_prob)

    def sequences(self, tokenizer: Tokenizer, docs: list[str], max_length: int) -> list[Tensor]:
        """Each document's ids, cut into pieces of at most ``max_length`` (pieces too short to predict dropped)."""
        shortest = 2 if self.objective == "causal" else 1
        out = []
        for ids in tokenizer.encode_many(docs):
            out += [
                torch.tensor(ids[i : i + max_length])
                for i in range(0, len(ids), max_length)
                if len(ids[i : i + max_length]) >= shortest
            ]
        return out

    def batch(self, seqs: list[Tensor], gen: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        """``(inputs (B, T), valid (B, T), targets (B, T))``; targets are ``IGNORE`` where nothing is predicted."""
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = s
        valid = ids != self.pad_id  # (B, T)
        if self.objective == "causal":
            targets = ids[:, 1:].masked_fill(~valid[:, 1:], IGNORE)
            return ids[:, :-1], valid[:, :-1], targets
        chosen = (torch.rand(ids.shape, generator=gen) < self.mask_prob) & valid
        if not chosen.any():
            chosen[0, 0] = True  # every batch predicts at least one word
        how = torch.rand(ids.shape, generator=gen)
        randoms = torch.randint(self.first_word, max(self.vocab_size, self.first_word + 1), ids.shape, generator=gen)
        inputs = torch.where(chosen & (how < 0.8), self.mask_id, ids)
        inputs = torch.where(chosen & (how >= 0.8) & (how < 0.9), randoms, inputs)
        return inputs, valid, ids.masked_fill(~chosen, IGNORE)

    def fixed_batches(self, seqs: list[Tensor], size: int = 64) -> list[tuple[Tensor, Tensor, Tensor]]:
        """Batches of ``size`` sequences with masks drawn once from a fixed generator: scores compare across steps."""
        gen = torch.Generator().manual_seed(FIXED_MASKS_SEED)
        return [self.batch(seqs[i : i + size], gen) for i in range(0, len(seqs), size)]

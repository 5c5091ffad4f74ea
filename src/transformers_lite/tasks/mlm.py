"""Pretraining the encoder on unlabelled text: masked language modelling (BERT) or next-word prediction.

Documents (reviews read for their text only, or plain text) -> the classifier's word tokenizer (plus
a ``[MASK]`` token) -> ids cut into sequences of at most ``max_length``. Masked objective: in every batch
``mask_prob`` of the real tokens are chosen; of those 80 % become ``[MASK]``, 10 % a random word and 10 %
stay, and the loss is the cross-entropy of the original words at the chosen positions. Causal objective:
every position predicts the next word. Batches and masks are functions of (seed, step): resuming is exact.
Validation uses fixed masks drawn once, so its loss and masked-token accuracy compare across steps.

Shapes: B batch, T tokens, V vocabulary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import validate
from ..config import EncoderLMConfig
from ..data.cooccurrence import ppmi_vectors
from ..data.documents import read_documents
from ..data.reviews import split_validation
from ..data.sources import sha256
from ..errors import ConfigError, DataError
from ..evaluation.metrics import perplexity
from ..tokenizers import Tokenizer, WordTokenizer, load_vocabulary, select_vocabulary
from ..training.settings import setting

IGNORE = -100  # positions without a target
EVAL_SEQUENCES = 2000  # the training split is scored on its first sequences (eval_train)


@dataclass(frozen=True)
class MaskedLMSettings:
    reviews: str | None = setting(
        "unlabelled reviews (.jsonl or .csv): only the review text is read, never the stars", None, path=True
    )
    text: str | None = setting("plain text, one document per line (added to --reviews)", None, path=True)
    vocab: str | None = setting("vocabulary file, one word per line", None, none="built from the documents", path=True)
    min_df: int = setting("minimum document frequency of a word in a vocabulary built from the documents", 2)
    batch_size: int = setting("sequences per batch", 32)
    val_fraction: float = setting("fraction of the documents held out for validation", 0.05)
    mask_prob: float = setting("masked objective: fraction of the tokens chosen for prediction", 0.15)
    embedding_init: str = setting(
        "how the embedding table starts: random N(0, 1) or PPMI co-occurrence vectors of the documents",
        "random",
        choices=("random", "ppmi"),
    )
    embedding_window: int = setting("co-occurrence window (tokens) for embedding_init=ppmi", 10)
    freeze_embedding: bool = setting(
        "keep the embedding table as it starts (with embedding_init=ppmi: the blocks learn on top of PPMI vectors)",
        False,
    )

    def __post_init__(self) -> None:
        for name in ("min_df", "batch_size", "embedding_window"):
            validate.integer(name, getattr(self, name))
        validate.number("val_fraction", self.val_fraction, 0, 1, low_open=True, high_open=True)
        validate.number("mask_prob", self.mask_prob, 0, 1, low_open=True)
        validate.choice("embedding_init", self.embedding_init, ("random", "ppmi"))


class MaskedLMTask:
    name = "mlm"
    Settings = MaskedLMSettings

    def __init__(
        self,
        settings: MaskedLMSettings,
        config: EncoderLMConfig,
        seed: int = 0,
        tokenizers: dict[str, Tokenizer] | None = None,
    ) -> None:
        s = self.settings = settings
        self.seed, self.objective, self.max_length = seed, config.objective, config.max_length
        self.paths = {k: Path(v) for k, v in (("reviews", s.reviews), ("text", s.text)) if v}
        if not self.paths:
            raise DataError("give the unlabelled documents with --reviews FILE and/or --text FILE")
        docs = [d for path in self.paths.values() for d in read_documents(path)]
        train_idx, val_idx = split_validation(len(docs), s.val_fraction, seed)
        if len(val_idx) == 0:
            raise DataError(f"--val-fraction {s.val_fraction} of {len(docs)} documents leaves no validation document")
        self.train_docs = [docs[i] for i in train_idx]
        tokenizer = (tokenizers or {}).get("tokenizer")
        if tokenizer is None:
            words = load_vocabulary(s.vocab) if s.vocab else select_vocabulary(self.train_docs, s.min_df)
            tokenizer = WordTokenizer(words, "[UNK]", pad="[PAD]", mask="[MASK]")
        if getattr(tokenizer, "mask_id", None) is None or tokenizer.pad_id is None:
            raise ConfigError("the tokenizer needs [PAD] and [MASK] tokens for pretraining")
        self.tokenizer = tokenizer
        self.first_word = _first_word(tokenizer)
        self.train_seqs = self._sequences(self.train_docs)
        self.val_seqs = self._sequences([docs[i] for i in val_idx])
        if not self.train_seqs:
            raise DataError("the training documents hold no word the tokenizer reads")
        self.val_batches = self._fixed_batches(self.val_seqs)
        self.train_eval_batches = self._fixed_batches(self.train_seqs[:EVAL_SEQUENCES])

    @classmethod
    def scorer(cls, settings: MaskedLMSettings, config: EncoderLMConfig, tokenizer: Tokenizer) -> MaskedLMTask:
        """A task that only scores documents with ``evaluate_documents`` (no corpus is read)."""
        task = cls.__new__(cls)
        task.settings, task.seed, task.objective, task.max_length = settings, 0, config.objective, config.max_length
        task.tokenizer, task.first_word = tokenizer, _first_word(tokenizer)
        return task

    def _sequences(self, docs: list[str]) -> list[Tensor]:
        """Each document's ids, cut into pieces of at most ``max_length`` (pieces too short to predict dropped)."""
        step, shortest = self.max_length, 2 if self.objective == "causal" else 1
        out = []
        for ids in self.tokenizer.encode_many(docs):
            out += [
                torch.tensor(ids[i : i + step]) for i in range(0, len(ids), step) if len(ids[i : i + step]) >= shortest
            ]
        return out

    def _fixed_batches(self, seqs: list[Tensor]) -> list[tuple[Tensor, Tensor, Tensor]]:
        """Batches of 64 sequences with masks drawn once from a fixed generator: scores compare across steps."""
        gen = torch.Generator().manual_seed(12_345)
        return [self._make_batch(seqs[i : i + 64], gen) for i in range(0, len(seqs), 64)]

    def adapt_config(self, config: EncoderLMConfig) -> EncoderLMConfig:
        return config.replace(
            vocab_size=len(self.tokenizer), pad_id=self.tokenizer.pad_id, mask_id=self.tokenizer.mask_id
        )

    def init_model(self, model: nn.Module) -> None:
        if self.settings.embedding_init != "ppmi":
            return
        ids, valid = self.tokenizer.encode_batch(self.train_docs, 2048)
        vectors = ppmi_vectors(
            ids, valid, model.config.vocab_size, model.config.dim, window=self.settings.embedding_window, seed=self.seed
        )  # (V, C)
        with torch.no_grad():
            model.embedding.weight.copy_(vectors)

    def lr_plan(self, model: nn.Module) -> dict[str, tuple[float, int]] | None:
        """``freeze_embedding``: the embedding table (and so the tied output table) gets learning rate 0."""
        return {"embedding.weight": (0.0, 0)} if self.settings.freeze_embedding else None

    def steps_per_epoch(self) -> int:
        return max(1, len(self.train_seqs) // self.settings.batch_size)

    def batch(self, index: int) -> tuple[Tensor, Tensor, Tensor]:
        epoch, i = divmod(index, self.steps_per_epoch())
        size = self.settings.batch_size
        order = np.random.default_rng([self.seed, epoch]).permutation(len(self.train_seqs))
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        return self._make_batch([self.train_seqs[j] for j in order[i * size : (i + 1) * size]], gen)

    def _make_batch(self, seqs: list[Tensor], gen: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        """``(inputs (B, T), valid (B, T), targets (B, T))``; targets are ``IGNORE`` where nothing is predicted."""
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.tokenizer.pad_id, dtype=torch.long)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = s
        valid = ids != self.tokenizer.pad_id  # (B, T)
        if self.objective == "causal":
            targets = ids[:, 1:].masked_fill(~valid[:, 1:], IGNORE)
            return ids[:, :-1], valid[:, :-1], targets
        chosen = (torch.rand(ids.shape, generator=gen) < self.settings.mask_prob) & valid
        if not chosen.any():
            chosen[0, 0] = True  # every batch predicts at least one word
        how = torch.rand(ids.shape, generator=gen)
        randoms = torch.randint(
            self.first_word, max(len(self.tokenizer), self.first_word + 1), ids.shape, generator=gen
        )
        inputs = torch.where(chosen & (how < 0.8), self.tokenizer.mask_id, ids)
        inputs = torch.where(chosen & (how >= 0.8) & (how < 0.9), randoms, inputs)
        return inputs, valid, ids.masked_fill(~chosen, IGNORE)

    def loss(self, model: nn.Module, batch: tuple[Tensor, Tensor, Tensor]) -> Tensor:
        inputs, valid, targets = batch
        keep = targets != IGNORE  # (B, T)
        logits = model.predict(model.encode(inputs, valid)[keep])  # (B, T, C)[keep] -> (N, C) -> (N, V)
        return F.cross_entropy(logits.float(), targets[keep])

    def evaluate(self, model: nn.Module, split: str = "val") -> dict[str, float]:
        """Mean loss over the predicted tokens and their accuracy (``val_masked_accuracy``, or
        ``val_next_accuracy`` for the causal objective); ``train_full_*`` on the training split's head."""
        batches = self.val_batches if split == "val" else self.train_eval_batches
        return score(model, batches, "val_" if split == "val" else "train_full_", self.objective)

    def evaluate_documents(self, model: nn.Module, docs: list[str]) -> dict[str, float]:
        """The same scores on other documents (``tlite evaluate MLM_RUN --text FILE``), masks drawn as for
        validation; keys without a prefix."""
        seqs = self._sequences(docs)
        if not seqs:
            raise DataError("the documents hold no word the tokenizer reads")
        return {**score(model, self._fixed_batches(seqs), "", self.objective), "n_sequences": len(seqs)}

    def save(self, run_dir: Path) -> None:
        self.tokenizer.save(run_dir / "tokenizer.json")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self.settings)
        out.update({k: str(p.resolve()) for k, p in self.paths.items()})
        out.update({f"{k}_sha256": sha256(p) for k, p in self.paths.items()})
        if self.settings.vocab:
            out["vocab_sha256"] = sha256(self.settings.vocab)
        out.update(
            {
                "train_documents": len(self.train_docs),
                "train_sequences": len(self.train_seqs),
                "val_sequences": len(self.val_seqs),
                "vocabulary": len(self.tokenizer),
            }
        )
        return out


def _first_word(tokenizer: Tokenizer) -> int:
    """The first id a random replacement may take: after the unknown word and the special tokens."""
    return max(tokenizer.special_ids() | {tokenizer.unk_id}) + 1


@torch.no_grad()
def score(
    model: nn.Module, batches: list[tuple[Tensor, Tensor, Tensor]], prefix: str, objective: str
) -> dict[str, float]:
    """Loss, accuracy and perplexity of ``model`` over the target positions of ``batches``."""
    device = next(model.parameters()).device
    total = correct = count = 0.0
    for inputs, valid, targets in batches:
        inputs, valid, targets = inputs.to(device), valid.to(device), targets.to(device)
        keep = targets != IGNORE  # (B, T)
        logits = model.predict(model.encode(inputs, valid)[keep]).float()  # (N, V)
        total += float(F.cross_entropy(logits, targets[keep], reduction="sum"))
        correct += float((logits.argmax(-1) == targets[keep]).sum())
        count += int(keep.sum())
    loss = total / max(count, 1)
    what = "masked" if objective == "masked" else "next"
    return {
        f"{prefix}loss": loss,
        f"{prefix}{what}_accuracy": correct / max(count, 1),
        f"{prefix}perplexity": perplexity(loss),
    }

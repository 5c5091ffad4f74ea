"""Pretraining the encoder on unlabelled text: masked language modelling (BERT) or next-word prediction.

Documents (reviews read for their text only, or plain text) -> the classifier's word tokenizer (plus
a ``[MASK]`` token) -> ids cut into sequences of at most ``max_length`` -> masked (or next-word)
batches (``data.masking``); the loss is the cross-entropy of the original words at the chosen
positions. Batches and masks are functions of (random seed, step): resuming is exact.
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
from ..data.documents import read_documents
from ..data.masking import IGNORE, Masking
from ..data.sources import sha256
from ..data.tables import split_validation
from ..errors import ConfigError, DataError
from ..evaluation.pretraining import score
from ..models import TransformerEncoderLM
from ..settings import setting
from ..tokenizers import Tokenizer
from ..training.task import TaskBase
from .embeddings import WordSettings, ppmi_init

EVAL_SEQUENCES = 2000  # the training split is scored on its first sequences (eval_train)


@dataclass(frozen=True)
class MaskedLMSettings(WordSettings):
    reviews: str | None = setting(
        "unlabelled reviews (.jsonl or .csv): only the review text is read, never the stars", None, path=True
    )
    text: str | None = setting("plain text, one document per line (added to --reviews)", None, path=True)
    batch_size: int = setting("sequences per batch", 32)
    val_fraction: float = setting("fraction of the documents held out for validation", 0.05)
    mask_prob: float = setting("masked objective: fraction of the tokens chosen for prediction", 0.15)
    freeze_embedding: bool = setting(
        "keep the embedding table as it starts (with embedding_init=ppmi: the blocks learn on top of PPMI vectors)",
        False,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        validate.integer("batch_size", self.batch_size)
        validate.number("val_fraction", self.val_fraction, 0, 1, low_open=True, high_open=True)
        validate.number("mask_prob", self.mask_prob, 0, 1, low_open=True)


class MaskedLMTask(TaskBase):
    name = "mlm"
    Settings = MaskedLMSettings

    def __init__(
        self,
        settings: MaskedLMSettings,
        config: EncoderLMConfig,
        tokenizer: Tokenizer,
        train_docs: list[str],
        val_docs: list[str],
        *,
        seed: int = 0,
        sources: dict[str, Path] | None = None,
    ) -> None:
        self.settings, self.seed, self.tokenizer = settings, seed, tokenizer
        self.sources = sources or {}
        self.objective, self.max_length = config.objective, config.max_length
        self.masking = Masking.of(tokenizer, config.objective, settings.mask_prob)
        self.train_docs = train_docs
        self.train_seqs = self.masking.sequences(tokenizer, train_docs, self.max_length)
        self.val_seqs = self.masking.sequences(tokenizer, val_docs, self.max_length)
        if not self.train_seqs:
            raise DataError("the training documents hold no word the tokenizer reads")
        self.val_batches = self.masking.fixed_batches(self.val_seqs)
        self.train_eval_batches = self.masking.fixed_batches(self.train_seqs[:EVAL_SEQUENCES])

    @classmethod
    def prepare(
        cls,
        settings: MaskedLMSettings,
        config: EncoderLMConfig,
        seed: int = 0,
        tokenizers: dict[str, Tokenizer] | None = None,
    ) -> MaskedLMTask:
        """Read the documents, split off the validation ones and build the word tokenizer (with
        ``[PAD]`` and ``[MASK]``), or take the resumed run's."""
        s = settings
        paths = {k: Path(v) for k, v in (("reviews", s.reviews), ("text", s.text)) if v}
        if not paths:
            raise DataError("give the unlabelled documents with --reviews FILE and/or --text FILE")
        docs = [d for path in paths.values() for d in read_documents(path)]
        train_idx, val_idx = split_validation(len(docs), s.val_fraction, seed)
        if len(val_idx) == 0:
            raise DataError(f"--val-fraction {s.val_fraction} of {len(docs)} documents leaves no validation document")
        train_docs = [docs[i] for i in train_idx]
        tokenizer = (tokenizers or {}).get("tokenizer")
        if tokenizer is None:
            tokenizer = s.tokenizer(train_docs, pad="[PAD]", mask="[MASK]")
        if getattr(tokenizer, "mask_id", None) is None or tokenizer.pad_id is None:
            raise ConfigError("the tokenizer needs [PAD] and [MASK] tokens for pretraining")
        return cls(s, config, tokenizer, train_docs, [docs[i] for i in val_idx], seed=seed, sources=paths)

    def model_config(self, config: EncoderLMConfig) -> EncoderLMConfig:
        return config.replace(
            vocab_size=len(self.tokenizer), pad_id=self.tokenizer.pad_id, mask_id=self.tokenizer.mask_id
        )

    def init_model(self, model: nn.Module) -> None:
        if self.settings.embedding_init == "ppmi":
            table, window = model.get_parameter("encoder.embedding.weight"), self.settings.embedding_window
            ppmi_init([table], self.tokenizer, self.train_docs, window, [self.seed])

    def lr_plan(self, model: nn.Module) -> dict[str, tuple[float, int]] | None:
        """``freeze_embedding``: the embedding table (and so the tied output table) gets learning rate 0."""
        return {"encoder.embedding.weight": (0.0, 0)} if self.settings.freeze_embedding else None

    def steps_per_epoch(self) -> int:
        return max(1, len(self.train_seqs) // self.settings.batch_size)

    def batch(self, index: int) -> tuple[Tensor, Tensor, Tensor]:
        epoch, i = divmod(index, self.steps_per_epoch())
        size = self.settings.batch_size
        order = np.random.default_rng([self.seed, epoch]).permutation(len(self.train_seqs))
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        return self.masking.batch([self.train_seqs[j] for j in order[i * size : (i + 1) * size]], gen)

    def loss(self, model: TransformerEncoderLM, batch: tuple[Tensor, Tensor, Tensor]) -> Tensor:
        inputs, valid, targets = batch
        keep = targets != IGNORE  # (B, T)
        logits = model.predict(model.encode(inputs, valid)[keep])  # (B, T, C)[keep] -> (N, C) -> (N, V)
        return F.cross_entropy(logits.float(), targets[keep])

    @property
    def metrics(self) -> tuple[str, ...]:  # type: ignore[override]  # computed from the data read
        what = "masked" if self.objective == "masked" else "next"
        return ("val_loss", f"val_{what}_accuracy", "val_perplexity")

    def evaluate(self, model: nn.Module, split: str = "val") -> dict[str, float]:
        """Mean loss over the predicted tokens and their accuracy (``val_masked_accuracy``, or
        ``val_next_accuracy`` for the causal objective); ``train_full_*`` on the training split's head."""
        batches = self.val_batches if split == "val" else self.train_eval_batches
        return score(model, batches, "val_" if split == "val" else "train_full_", self.objective)

    def tokenizers(self) -> dict[str, Tokenizer]:
        return {"tokenizer": self.tokenizer}

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self.settings)
        out.update({k: str(p.resolve()) for k, p in self.sources.items()})
        out.update({f"{k}_sha256": sha256(p) for k, p in self.sources.items()})
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

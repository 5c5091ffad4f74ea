"""Character GPT task (post 004): random shifted windows of a text, next-character cross-entropy.

Shapes: B batch, T context (the model's ``max_length``), V vocabulary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import validate
from ..config import GeneratorConfig
from ..data.shakespeare import get_shifted_batch, split_text, steps_per_epoch
from ..data.sources import read_text_file, resolve, sha256
from ..errors import DataError, warn
from ..evaluation.metrics import language_model_loss, perplexity
from ..tokenizers import CharTokenizer, Tokenizer
from ..training.settings import setting
from ..training.task import TaskBase

CORPORA = {"tinyshakespeare": ("tinyshakespeare", "input.txt"), "complete-works": ("complete-works", "plays.txt")}


@dataclass(frozen=True)
class GeneratorSettings:
    text: str | None = setting("training text", None, none="the --corpus file from the data folder", path=True)
    corpus: str = setting(
        "the text used without --text: tiny Shakespeare, or the plays of the Complete Works "
        "(tlite data download complete-works)",
        "tinyshakespeare",
        choices=tuple(CORPORA),
    )
    batch_size: int = setting("windows per batch", 32)
    val_fraction: float = setting("the last fraction of the text, kept for validation", 0.1)
    eval_tokens: int | None = setting("validation tokens scored per evaluation", None, none="the whole split")

    def __post_init__(self) -> None:
        validate.choice("corpus", self.corpus, CORPORA)
        validate.integer("batch_size", self.batch_size)
        validate.number("val_fraction", self.val_fraction, 0, 1, low_open=True, high_open=True)  # needs a split
        validate.integer("eval_tokens", self.eval_tokens, optional=True)


class GeneratorTask(TaskBase):
    name = "generator"
    Settings = GeneratorSettings

    def __init__(
        self,
        settings: GeneratorSettings,
        config: GeneratorConfig,
        tokenizer: Tokenizer,
        ids: Tensor,
        *,
        seed: int = 0,
        source: Path | None = None,
    ) -> None:
        """``ids (N,)``: the whole text as token ids; the last ``val_fraction`` of it is for validation."""
        self.settings, self.tokenizer, self.source = settings, tokenizer, source
        self.train_ids, self.val_ids = split_text(ids, settings.val_fraction)
        self.context, self.batch_size, self.seed = config.max_length, settings.batch_size, seed
        where = source or "the text"
        if len(self.val_ids) < 2:
            raise DataError(
                f"{where}: a validation split of {len(self.val_ids)} characters is too small; "
                "raise --val-fraction or use a longer text"
            )
        if len(self.train_ids) < self.context + 1:
            raise DataError(
                f"{where}: {len(self.train_ids)} training characters are too few for a context of "
                f"{self.context}; use a longer text or a smaller --set max_length"
            )
        self._rng = torch.Generator()

    @classmethod
    def prepare(
        cls,
        settings: GeneratorSettings,
        config: GeneratorConfig,
        seed: int = 0,
        tokenizers: dict[str, Tokenizer] | None = None,
    ) -> GeneratorTask:
        """Read ``--text`` (or the ``--corpus`` file) and its characters (or the resumed run's tokenizer)."""
        if not config.causal:
            warn(
                "causal=false is a teaching experiment (post 004): every position sees the characters it must "
                "predict, so the loss falls far below what generation achieves"
            )
        path = Path(settings.text) if settings.text else resolve(*CORPORA[settings.corpus])
        raw = read_text_file(path)
        tokenizer = (tokenizers or {}).get("tokenizer") or CharTokenizer.from_text(raw)
        ids = torch.tensor(tokenizer.encode(raw), dtype=torch.long)
        return cls(settings, config, tokenizer, ids, seed=seed, source=path)

    def model_config(self, config: GeneratorConfig) -> GeneratorConfig:
        return config.replace(vocab_size=len(self.tokenizer))

    def steps_per_epoch(self) -> int:
        return steps_per_epoch(len(self.train_ids), self.context, self.batch_size)

    def batch(self, index: int) -> tuple[Tensor, Tensor]:
        self._rng.manual_seed(self.seed * 1_000_003 + index)  # batch = f(random seed, index): exact resume
        return get_shifted_batch(self._rng, self.train_ids, self.context, self.batch_size)

    def loss(self, model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
        x, y = batch
        logits = model(x)  # (B, T, V)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten())

    def evaluate(self, model: nn.Module, split: str = "val") -> dict[str, float]:
        """Mean next-token loss and perplexity on the validation split (``val_*``) or the training split
        (``train_full_*``)."""
        ids, prefix = (self.val_ids, "val_") if split == "val" else (self.train_ids, "train_full_")
        loss, _ = language_model_loss(model, ids, self.context, max_tokens=self.settings.eval_tokens)
        return {f"{prefix}loss": loss, f"{prefix}perplexity": perplexity(loss)}

    def tokenizers(self) -> dict[str, Tokenizer]:
        return {"tokenizer": self.tokenizer}

    def describe(self) -> dict[str, Any]:
        return {
            **asdict(self.settings),
            "text": None if self.source is None else str(self.source.resolve()),
            "text_sha256": None if self.source is None else sha256(self.source),
            "train_tokens": len(self.train_ids),
            "val_tokens": len(self.val_ids),
        }

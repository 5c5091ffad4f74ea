"""Character GPT task (seed 004): random shifted windows of a text, next-character cross-entropy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..config import GeneratorConfig
from ..data.shakespeare import get_shifted_batch, split_text, steps_per_epoch
from ..data.sources import read_text_file, sha256
from ..evaluation.metrics import language_model_loss, perplexity
from ..tokenizers.index import CharTokenizer

DEFAULTS = {"batch_size": 32, "val_fraction": 0.1, "eval_tokens": None}


class GeneratorTask:
    name = "generator"

    def __init__(self, text: str | Path, *, context: int, batch_size: int = 32, val_fraction: float = 0.1,
                 seed: int = 0, eval_tokens: int | None = None, tokenizer: CharTokenizer | None = None) -> None:
        self.path = Path(text)
        raw = read_text_file(self.path)
        self.tokenizer = tokenizer or CharTokenizer.from_text(raw)
        ids = torch.tensor(self.tokenizer.encode(raw), dtype=torch.long)
        self.train_ids, self.val_ids = split_text(ids, val_fraction)
        if len(self.val_ids) < 2:
            raise ValueError(f"{self.path}: validation split of {len(self.val_ids)} characters is too small; "
                             "raise val_fraction or use a longer text")
        self.context, self.batch_size, self.seed = context, batch_size, seed
        self.val_fraction, self.eval_tokens = val_fraction, eval_tokens
        self._rng = torch.Generator()

    def adapt_config(self, config: GeneratorConfig) -> GeneratorConfig:
        return config.replace(vocab_size=len(self.tokenizer))

    def steps_per_epoch(self) -> int:
        return steps_per_epoch(len(self.train_ids), self.context, self.batch_size)

    def batch(self, index: int) -> tuple[Tensor, Tensor]:
        self._rng.manual_seed(self.seed * 1_000_003 + index)  # batch = f(seed, index): exact resume
        return get_shifted_batch(self._rng, self.train_ids, self.context, self.batch_size)

    def loss(self, model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
        x, y = batch
        logits = model(x)  # (B, T, V)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten())

    def evaluate(self, model: nn.Module) -> dict[str, float]:
        loss, _ = language_model_loss(model, self.val_ids, self.context, max_tokens=self.eval_tokens)
        return {"val_loss": loss, "val_perplexity": perplexity(loss)}

    def save(self, run_dir: Path) -> None:
        self.tokenizer.save(run_dir / "tokenizer.json")

    def describe(self) -> dict[str, Any]:
        return {"text": str(self.path.resolve()), "text_sha256": sha256(self.path), "context": self.context,
                "batch_size": self.batch_size, "val_fraction": self.val_fraction, "eval_tokens": self.eval_tokens,
                "train_tokens": len(self.train_ids), "val_tokens": len(self.val_ids)}


def add_arguments(parser) -> None:  # noqa: ANN001
    parser.add_argument("--text", help="training text, e.g. tinyshakespeare/input.txt")
    parser.add_argument("--eval-tokens", type=int, default=None, help="cap on validation tokens per evaluation")


def build(args, config: GeneratorConfig, seed: int, run_tokenizer=None, recorded: dict | None = None):  # noqa: ANN001, ANN201
    """Make the task from CLI args (fresh run) or from a run's recorded data settings (resume)."""
    rec = recorded or {}
    text = rec.get("text") or args.text
    if not text:
        from ..data.sources import resolve

        text = resolve("tinyshakespeare", "input.txt")
    batch = rec.get("batch_size") or args.batch_size or DEFAULTS["batch_size"]
    val = rec.get("val_fraction", args.val_fraction if args.val_fraction is not None else DEFAULTS["val_fraction"])
    eval_tokens = rec.get("eval_tokens", args.eval_tokens)
    return GeneratorTask(text, context=config.context, batch_size=batch, val_fraction=val, seed=seed,
                         eval_tokens=eval_tokens, tokenizer=run_tokenizer)

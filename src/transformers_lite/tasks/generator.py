"""Character GPT task (post 004): random shifted windows of a text, next-token cross-entropy (tokens are
characters, or byte-level BPE pieces with ``tokenizer=bpe``).

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
from ..data.corpus import Corpus, corpus_sha256, read_corpus
from ..data.shakespeare import get_shifted_batch, split_text, steps_per_epoch
from ..data.sources import resolve
from ..errors import ConfigError, DataError, warn
from ..evaluation.metrics import bits_per_unit, language_model_loss, perplexity, text_units
from ..settings import setting
from ..tokenizers import CharTokenizer, Tokenizer
from ..tokenizers.byte_bpe import ByteLevelBPETokenizer
from ..training.task import TaskBase

TOKENIZERS = ("char", "bpe")
CORPORA = {"tinyshakespeare": ("tinyshakespeare", "input.txt"), "complete-works": ("complete-works", "plays.txt")}


@dataclass(frozen=True)
class GeneratorSettings:
    text: str | None = setting(
        "training text: a file, a folder (every text file under it) or a quoted glob pattern ('src/**/*.py')",
        None,
        none="the --corpus file from the data folder",
        path=True,
    )
    exclude: str | None = setting(
        "leave out of --text the files matching these glob patterns, by name or path inside the folder "
        "(comma-separated: '*.json,data/*')",
        None,
        none="every file",
    )
    corpus: str = setting(
        "the text used without --text: tiny Shakespeare, or the plays of the Complete Works "
        "(tlite data download complete-works)",
        "tinyshakespeare",
        choices=tuple(CORPORA),
        applies=("text", (None,)),
    )
    batch_size: int = setting("windows per batch", 32)
    val_fraction: float = setting("the last fraction of the text, kept for validation", 0.1)
    eval_tokens: int | None = setting("validation tokens scored per evaluation", None, none="the whole split")
    tokenizer: str = setting(
        "characters (post 004), or a byte-level BPE learned on the text (GPT-2's scheme: any text encodes)",
        "char",
        choices=TOKENIZERS,
    )
    vocab_size: int = setting("the BPE's vocabulary size (tokenizer=bpe)", 1024, applies=("tokenizer", ("bpe",)))

    def __post_init__(self) -> None:
        validate.flags(self)
        validate.choice("corpus", self.corpus, CORPORA)
        validate.choice("tokenizer", self.tokenizer, TOKENIZERS)
        validate.integer("vocab_size", self.vocab_size, 258, high=1_000_000)
        validate.integer("batch_size", self.batch_size)
        validate.number("val_fraction", self.val_fraction, 0, 1, low_open=True, high_open=True)  # needs a split
        validate.integer("eval_tokens", self.eval_tokens, optional=True)
        if self.exclude is not None and not self.text:
            raise ConfigError(f"--exclude {self.exclude!r} leaves files out of --text: give --text FOLDER or PATTERN")


class GeneratorTask(TaskBase):
    name = "generator"
    metrics = ("val_loss", "val_perplexity", "val_bits_per_char", "val_bits_per_byte")
    Settings = GeneratorSettings

    def __init__(
        self,
        settings: GeneratorSettings,
        config: GeneratorConfig,
        tokenizer: Tokenizer,
        ids: Tensor,
        *,
        seed: int = 0,
        source: Path | str | None = None,
        corpus: Corpus | None = None,
    ) -> None:
        """``ids (N,)``: the whole text as token ids; the last ``val_fraction`` of it is for validation;
        ``source`` the file, folder or pattern it came from and ``corpus`` its files (for the record)."""
        self.settings, self.tokenizer, self.source, self.corpus = settings, tokenizer, source, corpus
        self.note = "" if corpus is None else corpus.report()
        self.train_ids, self.val_ids = split_text(ids, settings.val_fraction)
        self.context, self.batch_size, self.seed = config.max_length, settings.batch_size, seed
        where = source or "the text"
        if len(self.val_ids) < 2:
            raise DataError(
                f"{where}: a validation split of {len(self.val_ids)} tokens is too small; "
                "raise --val-fraction or use a longer text"
            )
        if len(self.train_ids) < self.context + 1:
            raise DataError(
                f"{where}: {len(self.train_ids)} training tokens are too few for a context of "
                f"{self.context}; use a longer text or a smaller --set max_length"
            )
        self._rng = torch.Generator()
        self._units: dict[tuple[str, int], tuple[int, int]] = {}  # (split, tokens scored) -> (characters, bytes)

    @classmethod
    def prepare(
        cls,
        settings: GeneratorSettings,
        config: GeneratorConfig,
        seed: int = 0,
        tokenizers: dict[str, Tokenizer] | None = None,
    ) -> GeneratorTask:
        """Read ``--text`` (a file, folder or pattern; or the ``--corpus`` file) and build its tokenizer
        (characters or a byte-level BPE; or take the resumed run's)."""
        if not config.causal:
            warn(
                "causal=false is a teaching experiment (post 004): every position sees the characters it must "
                "predict, so the loss falls far below what generation achieves"
            )
        source = settings.text if settings.text else resolve(*CORPORA[settings.corpus])
        corpus = read_corpus(source, settings.exclude)
        if corpus.skipped:
            warn(f"{source}: {corpus.skipped_line()}")
        tokenizer = (tokenizers or {}).get("tokenizer")
        if tokenizer is None:
            bpe = settings.tokenizer == "bpe"
            tokenizer = ByteLevelBPETokenizer.train([corpus.text], settings.vocab_size) if bpe else None
            tokenizer = tokenizer or CharTokenizer.from_text(corpus.text)
        ids = torch.tensor(tokenizer.encode(corpus.text), dtype=torch.long)
        return cls(settings, config, tokenizer, ids, seed=seed, source=source, corpus=corpus)

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
        """Mean next-token loss, perplexity, and bits per character and per UTF-8 byte of the decoded text
        (comparable across tokenizers) on the validation split (``val_*``) or the training split
        (``train_full_*``)."""
        ids, prefix = (self.val_ids, "val_") if split == "val" else (self.train_ids, "train_full_")
        loss, n = language_model_loss(model, ids, self.context, max_tokens=self.settings.eval_tokens)
        if (split, n) not in self._units:  # the text of the n predicted tokens, decoded once
            self._units[split, n] = text_units(self.tokenizer.decode(ids[1 : n + 1].tolist()))
        chars, nbytes = self._units[split, n]
        return {
            f"{prefix}loss": loss,
            f"{prefix}perplexity": perplexity(loss),
            f"{prefix}bits_per_char": bits_per_unit(loss, n, chars),
            f"{prefix}bits_per_byte": bits_per_unit(loss, n, nbytes),
        }

    def tokenizers(self) -> dict[str, Tokenizer]:
        return {"tokenizer": self.tokenizer}

    def describe(self) -> dict[str, Any]:
        return {
            **asdict(self.settings),
            "text": None if self.source is None else str(Path(self.source).resolve()),  # a pattern stays one
            "text_sha256": None if self.source is None else corpus_sha256(self.source, self.settings.exclude),
            "files": None if self.corpus is None else len(self.corpus.files),
            "train_tokens": len(self.train_ids),
            "val_tokens": len(self.val_ids),
        }

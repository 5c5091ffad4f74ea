"""A pretraining run (``tlite train mlm``) that a classifier starts from (``--init-from RUN``).

The classifier inherits three things, all checked: the run's tokenizer (ids must mean the same
words), the encoder's shape (``dim``, heads, hidden size, blocks, activation, norm placement, biases)
and its weights (embedding table, blocks, final norm; the language-model head is dropped).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import EncoderConfig, EncoderLMConfig
from ..errors import ConfigError
from ..models import TransformerClassifier
from ..models.encoder_lm import transfer_encoder
from ..runs import load_tokenizers, read_config, read_weights
from ..tokenizers import Tokenizer, load_vocabulary


class Pretrained:
    """The pieces of ``run_dir`` a classifier needs; ``vocab_path`` (the user's ``--vocab``), when
    given, must list the run's words, or the run's ids would be read as other words."""

    def __init__(self, run_dir: Path, vocab_path: Path | None = None) -> None:
        if not run_dir.is_dir():
            raise ConfigError(f"--init-from {run_dir}: no such run directory")
        self.run_dir = run_dir
        config = read_config(run_dir)
        if not isinstance(config, EncoderLMConfig):
            raise ConfigError(
                f"--init-from {run_dir}: that is a {config.family} run; the classifier starts from a "
                "`tlite train mlm` run (masked or causal objective)"
            )
        self.config = config
        self.tokenizer: Tokenizer = load_tokenizers(run_dir, "mlm")["tokenizer"]
        if vocab_path is not None:
            self._check_vocabulary(vocab_path)

    def _check_vocabulary(self, vocab_path: Path) -> None:
        unknown = set() if self.tokenizer.unk_id is None else {self.tokenizer.unk_id}
        specials = {self.tokenizer.token(i) for i in self.tokenizer.special_ids() | unknown}
        theirs = [w for w in getattr(self.tokenizer, "vocabulary", []) if w not in specials]
        ours = [w for w in load_vocabulary(vocab_path) if w not in specials]
        if ours != theirs:
            first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
            raise ConfigError(
                f"--vocab {vocab_path} ({len(ours)} words) does not match the vocabulary of --init-from "
                f"{self.run_dir} ({len(theirs)} words; first difference at word {first}): drop --vocab to use "
                "the pretrained run's, or pretrain with the same --vocab"
            )

    def shape(self) -> dict[str, Any]:
        """The encoder fields the classifier's config must share with the pretrained model."""
        return {k: getattr(self.config, k) for k in EncoderConfig.SHAPE}

    def transfer(self, model: TransformerClassifier) -> list[str]:
        """Copy the pretrained encoder into ``model`` (reads the weights file; draws no random numbers)."""
        return transfer_encoder(model, read_weights(self.run_dir), self.config)

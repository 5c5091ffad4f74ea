"""The classifier's encoder with a language-model head, for pretraining on unlabelled text.

embedding -> sinusoidal position encoding -> (input dropout) -> encoder blocks -> [final norm] ->
head: Dense(C, C) -> activation -> LayerNorm -> logits over the vocabulary with the embedding table
(tied, as BERT) plus a bias. Parameter names match ``TransformerClassifier``'s (``embedding``,
``blocks.*``, ``final_norm``), so a classifier starts from them by name (``transfer_encoder``).

``objective="masked"``: every position sees every real token (padding keys hidden); the loss is taken
at the masked positions only (the task chooses them). ``"causal"``: position t sees positions <= t and
predicts token t + 1, as the seeds' generator, on the same words.

Shapes: B batch, T tokens, C channels, V vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..config import EncoderLMConfig
from ..errors import ConfigError
from .encoder import build_encoder, check_inputs, run_encoder

ENCODER_PREFIXES = ("embedding.", "blocks.", "final_norm.")
SHAPE_FIELDS = ("dim", "n_heads", "dim_hidden", "n_blocks", "activation", "norm_first", "qkv_bias")


class TransformerEncoderLM(nn.Module):
    def __init__(self, config: EncoderLMConfig) -> None:
        super().__init__()
        self.config = c = config
        build_encoder(self, c)  # the classifier's layers, by the same names
        self.lm_dense = nn.Linear(c.dim, c.dim)
        self.lm_norm = nn.LayerNorm(c.dim)
        self.lm_bias = nn.Parameter(torch.zeros(c.vocab_size))

    def encode(self, ids: Tensor, valid: Tensor | None = None) -> Tensor:
        """``ids (B, T)`` -> hidden states ``(B, T, C)``, the part a classifier inherits."""
        ids, valid = check_inputs(ids, valid, self.config.max_length, self.config.pad_id)
        return run_encoder(self, ids, valid, causal=self.config.objective == "causal")

    def forward(self, ids: Tensor, valid: Tensor | None = None) -> Tensor:
        """``ids (B, T)`` (True in ``valid`` = real token) -> logits ``(B, T, V)``."""
        return self.predict(self.encode(ids, valid))

    def predict(self, hidden: Tensor) -> Tensor:
        """The language-model head on hidden states ``(..., C)`` -> logits ``(..., V)``; the training loss
        calls it on the masked positions only, a sevenfold saving at 15 % masking."""
        h = self.lm_norm(_activate(self.lm_dense(hidden), self.config.activation))  # (..., C)
        return h @ self.embedding.weight.T + self.lm_bias  # (..., C) @ (C, V) -> (..., V)


def _activate(x: Tensor, name: str) -> Tensor:
    return F.relu(x) if name == "relu" else F.gelu(x, approximate="tanh" if name == "gelu_tanh" else "none")


def encoder_state(model: nn.Module) -> dict[str, Tensor]:
    """The tensors a classifier inherits: embedding, blocks and final norm, by name."""
    return {k: v for k, v in model.state_dict().items() if k.startswith(ENCODER_PREFIXES)}


def transfer_encoder(classifier: nn.Module, source: dict[str, Tensor], source_config: EncoderLMConfig) -> list[str]:
    """Copy a pretrained encoder into ``classifier`` in place; the names copied. Shapes must agree:
    a ``ConfigError`` names every setting that differs."""
    target = classifier.config
    differ = [f"{k} {getattr(source_config, k)} vs {getattr(target, k)}" for k in SHAPE_FIELDS
              if getattr(source_config, k) != getattr(target, k)]  # fmt: skip
    if source_config.vocab_size != target.vocab_size:
        differ.append(f"vocabulary {source_config.vocab_size} vs {target.vocab_size} tokens")
    if differ:
        raise ConfigError(f"the pretrained encoder does not fit this classifier: {'; '.join(differ)}")
    own = classifier.state_dict()
    copied = [k for k in source if k.startswith(ENCODER_PREFIXES) and k in own]
    with torch.no_grad():
        for k in copied:
            own[k].copy_(source[k])
    return copied

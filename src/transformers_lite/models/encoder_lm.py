"""The classifier's encoder with a language-model head, for pretraining on unlabelled text.

encoder (embedding -> sinusoidal position encoding -> blocks -> [final norm]) -> head: Dense(C, C) ->
activation -> LayerNorm -> logits over the vocabulary with the embedding table (tied, as BERT) plus a
bias. The encoder is the classifier's (``models.Encoder``, same parameter names), so a classifier
starts from it (``transfer_encoder``).

``objective="masked"``: every position sees every real token (padding keys hidden); the loss is taken
at the masked positions only (the task chooses them). ``"causal"``: position t sees positions <= t and
predicts token t + 1, as the posts' generator, on the same words.

Shapes: B batch, T tokens, C channels, V vocabulary.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ..config import EncoderConfig, EncoderLMConfig
from ..errors import ConfigError
from ..layers import NO_TRACE, Trace, activation
from ..layers.steps import Step
from .classifier import TransformerClassifier
from .encoder import check_inputs, encoder_of


class TransformerEncoderLM(nn.Module):
    def __init__(self, config: EncoderLMConfig) -> None:
        super().__init__()
        self.config = c = config
        self.encoder = encoder_of(c, causal=c.objective == "causal")
        self.lm_dense = nn.Linear(c.dim, c.dim)
        self.lm_norm = nn.LayerNorm(c.dim)
        self.lm_bias = nn.Parameter(torch.zeros(c.vocab_size))
        self.act = activation(c.activation)
        act = self.act.written
        self.steps = {
            "logits": Step(
                "lm_head",
                "TV",
                f"z = LN({act}(x W_dᵀ + b_d)) Eᵀ + b: the token table E is the output layer",
                None,
                "one score per vocabulary entry: the word the model predicts at each position",
                computes=f"a Dense (x times W_dᵀ, plus the bias b_d), then {act}, a layer norm, then the token "
                "table E as the output layer (plus the bias b), in one step",
            )
        }

    def encode(self, ids: Tensor, valid: Tensor | None = None, *, trace: Trace = NO_TRACE) -> Tensor:
        """``ids (B, T)`` -> hidden states ``(B, T, C)``, the part a classifier inherits."""
        ids, valid = check_inputs(ids, valid, self.config.max_length, self.config.pad_id)
        return self.encoder(ids, valid, trace=trace.at("encoder"))

    def forward(self, ids: Tensor, valid: Tensor | None = None, *, trace: Trace = NO_TRACE) -> Tensor:
        """``ids (B, T)`` (True in ``valid`` = real token) -> logits ``(B, T, V)``."""
        hidden = self.encode(ids, valid, trace=trace)
        return trace.declare(self.steps)("logits", self.predict(hidden), hidden)

    def predict(self, hidden: Tensor) -> Tensor:
        """The language-model head on hidden states ``(..., C)`` -> logits ``(..., V)``; the training loss
        calls it on the masked positions only, a sevenfold saving at 15 % masking."""
        h = self.lm_norm(self.act.function(self.lm_dense(hidden)))  # (..., C)
        return h @ self.encoder.embedding.weight.T + self.lm_bias  # (..., C) @ (C, V) -> (..., V)


def transfer_encoder(
    classifier: TransformerClassifier, source: dict[str, Tensor], source_config: EncoderLMConfig
) -> list[str]:
    """Copy a pretrained encoder (``source``: the pretraining run's tensors by name) into ``classifier``
    in place; the names copied. Shapes must agree: a ``ConfigError`` names every setting that differs."""
    target = classifier.config
    differ = [f"{k} {getattr(source_config, k)} vs {getattr(target, k)}" for k in EncoderConfig.SHAPE
              if getattr(source_config, k) != getattr(target, k)]  # fmt: skip
    if source_config.vocab_size != target.vocab_size:
        differ.append(f"vocabulary {source_config.vocab_size} vs {target.vocab_size} tokens")
    if differ:
        raise ConfigError(f"the pretrained encoder does not fit this classifier: {'; '.join(differ)}")
    own = classifier.state_dict()
    copied = [k for k in source if k.startswith("encoder.") and k in own]
    with torch.no_grad():
        for k in copied:
            own[k].copy_(source[k])
    return copied

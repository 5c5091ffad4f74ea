"""The model families (classifier, GPT, translator, encoder with a language-model head) and ``build_model``."""

from __future__ import annotations

from torch import nn

from ..config import ClassifierConfig, Config, EncoderLMConfig, GeneratorConfig, Seq2SeqConfig
from .classifier import TransformerClassifier
from .encoder_lm import TransformerEncoderLM
from .ensemble import ClassifierEnsemble
from .generator import TransformerGenerator
from .seq2seq import Seq2SeqTransformer


def build_model(config: Config) -> nn.Module:
    """Instantiate the model family that ``config`` describes."""
    if isinstance(config, ClassifierConfig):
        return ClassifierEnsemble(config) if config.members > 1 else TransformerClassifier(config)
    if isinstance(config, GeneratorConfig):
        return TransformerGenerator(config)
    if isinstance(config, Seq2SeqConfig):
        return Seq2SeqTransformer(config)
    if isinstance(config, EncoderLMConfig):
        return TransformerEncoderLM(config)
    raise ValueError(f"not a model config: {type(config).__name__}")


__all__ = [
    "build_model",
    "TransformerClassifier",
    "ClassifierEnsemble",
    "TransformerGenerator",
    "Seq2SeqTransformer",
    "TransformerEncoderLM",
]

"""The model families (classifier, GPT, translator, encoder with a language-model head) and ``build_model``."""

from __future__ import annotations

from torch import nn

from ..config import ClassifierConfig, Config, EncoderLMConfig, GeneratorConfig, Seq2SeqConfig
from .classifier import TransformerClassifier
from .encoder import Encoder
from .encoder_lm import TransformerEncoderLM
from .ensemble import ClassifierEnsemble
from .generator import TransformerGenerator
from .seq2seq import TransformerSeq2Seq

MODELS: dict[type, type] = {
    GeneratorConfig: TransformerGenerator,
    Seq2SeqConfig: TransformerSeq2Seq,
    EncoderLMConfig: TransformerEncoderLM,
}


def build_model(config: Config) -> nn.Module:
    """Instantiate the model family that ``config`` describes."""
    if isinstance(config, ClassifierConfig):
        return ClassifierEnsemble(config) if config.members > 1 else TransformerClassifier(config)
    if type(config) not in MODELS:
        raise ValueError(f"not a model config: {type(config).__name__}")
    return MODELS[type(config)](config)


__all__ = [
    "build_model",
    "Encoder",
    "TransformerClassifier",
    "ClassifierEnsemble",
    "TransformerGenerator",
    "TransformerSeq2Seq",
    "TransformerEncoderLM",
]

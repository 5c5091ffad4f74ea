"""Model configs: frozen dataclasses, validated on construction, saved as JSON beside the weights.

Three families, one config each: ``ClassifierConfig`` (seed 000), ``GeneratorConfig`` (seed 004)
and ``Seq2SeqConfig`` (seed 001). ``PRESETS`` names ready-made configs; ``build_model`` turns any
config into its model.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Union

ACTIVATIONS = ("relu", "gelu")


def _check_common(cfg: Any) -> None:
    for name in ("dim", "n_heads", "dim_hidden"):
        value = getattr(cfg, name)
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if cfg.dim % cfg.n_heads != 0:
        raise ValueError(f"dim={cfg.dim} is not divisible by n_heads={cfg.n_heads}")
    if not 0.0 <= cfg.dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {cfg.dropout}")
    if cfg.activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {cfg.activation!r}")


class _ConfigMixin:
    family: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, **dataclasses.asdict(self)}  # type: ignore[call-overload]

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            from .atomic import atomic_write_text

            atomic_write_text(path, text + "\n")
        return text

    def replace(self, **changes: Any):  # noqa: ANN201 - returns the same config class
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


@dataclass(frozen=True)
class ClassifierConfig(_ConfigMixin):
    """Review classifier: embedding -> position encoding -> encoder blocks -> head."""

    family: ClassVar[str] = "classifier"
    vocab_size: int = 7455
    n_labels: int = 5
    max_length: int = 50
    dim: int = 32
    n_heads: int = 4
    dim_hidden: int = 128
    n_blocks: int = 1
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = False
    qkv_bias: bool = True
    head: str = "seed"  # "seed" (Dense(C,1) -> flatten -> Dense(T,K)) or "mean" (masked mean pooling)
    head_dropout: float = 0.0
    position_encoding_length: int = 1000
    pad_id: Union[int, None] = None
    # how training starts the embedding table: "random" (N(0, 1), seed 000) or "ppmi" (co-occurrence
    # vectors of the training texts, data/cooccurrence.py, counted within ``embedding_window`` tokens);
    # the model itself ignores these, the classifier task applies them before the first step
    embedding_init: str = "random"
    embedding_window: int = 10

    def __post_init__(self) -> None:
        _check_common(self)
        if self.embedding_init not in ("random", "ppmi"):
            raise ValueError(f"embedding_init must be 'random' or 'ppmi', got {self.embedding_init!r}")
        if self.embedding_window < 1:
            raise ValueError(f"embedding_window must be >= 1, got {self.embedding_window}")
        if self.vocab_size < 1:
            raise ValueError(f"vocab_size must be >= 1, got {self.vocab_size}")
        if self.n_labels < 1:
            raise ValueError(f"n_labels must be >= 1 (1 = a single logit for binary BCE), got {self.n_labels}")
        if self.head not in ("seed", "mean"):
            raise ValueError(f"head must be 'seed' or 'mean', got {self.head!r}")
        if self.max_length < 1 or self.max_length > self.position_encoding_length:
            raise ValueError(f"max_length={self.max_length} must be in 1..{self.position_encoding_length}")
        if self.pad_id is not None and not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"pad_id={self.pad_id} is outside the vocabulary of {self.vocab_size}")


@dataclass(frozen=True)
class GeneratorConfig(_ConfigMixin):
    """Character GPT: token + learned position embeddings -> causal blocks -> Dense to vocabulary."""

    family: ClassVar[str] = "generator"
    vocab_size: int = 71
    context: int = 64
    dim: int = 32
    n_heads: int = 4
    dim_hidden: int = 128
    n_blocks: int = 3
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = False
    qkv_bias: bool = False
    tie_weights: bool = False
    final_norm: bool = False  # a LayerNorm before the head (usual with pre-norm; the seed has none)
    position: str = "learned"  # "learned" (seed 004) or "rope"

    def __post_init__(self) -> None:
        _check_common(self)
        if self.vocab_size < 1 or self.context < 1:
            raise ValueError(f"vocab_size and context must be >= 1, got {self.vocab_size}, {self.context}")
        if self.position not in ("learned", "rope"):
            raise ValueError(f"position must be 'learned' or 'rope', got {self.position!r}")


@dataclass(frozen=True)
class Seq2SeqConfig(_ConfigMixin):
    """Encoder-decoder translator (seed 001, "Attention is all you need")."""

    family: ClassVar[str] = "seq2seq"
    src_vocab_size: int = 8000
    tgt_vocab_size: int = 8000
    max_length: int = 128
    dim: int = 256
    n_heads: int = 4
    dim_hidden: int = 1024
    n_encoder_blocks: int = 3
    n_decoder_blocks: int = 3
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = True
    qkv_bias: bool = True
    share_embeddings: bool = False  # one table for source and target (needs a shared vocabulary)
    tie_output: bool = True  # output projection shares the target embedding
    pad_id: int = 1  # the tokenizers' convention: <unk>=0, <pad>=1, <bos>=2, <eos>=3

    def __post_init__(self) -> None:
        _check_common(self)
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                f"share_embeddings needs equal vocabularies, got {self.src_vocab_size} and {self.tgt_vocab_size}"
            )
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"pad_id={self.pad_id} is outside the vocabularies")


Config = Union[ClassifierConfig, GeneratorConfig, Seq2SeqConfig]
FAMILIES: dict[str, type] = {c.family: c for c in (ClassifierConfig, GeneratorConfig, Seq2SeqConfig)}

PRESETS: dict[str, Config] = {
    # seed 000: 251,552 trainable parameters (+32,000 position-encoding values)
    "seed-classifier": ClassifierConfig(),
    # best default for reviews (tuned on MARC dev, see README): masked mean pooling, pad-aware, heavy dropout
    # embeddings start from PPMI co-occurrence vectors of the training reviews
    "classifier": ClassifierConfig(head="mean", max_length=128, dropout=0.5, head_dropout=0.5, pad_id=1,
                                   embedding_init="ppmi"),
    # seed 004: 44,487 trainable parameters
    "seed-gpt": GeneratorConfig(),
    # a widely used CPU reference configuration ("baby GPT")
    "baby-gpt": GeneratorConfig(dim=128, n_heads=4, dim_hidden=512, n_blocks=4, context=64, dropout=0.0,
                                norm_first=True, final_norm=True, qkv_bias=False, vocab_size=65, activation="gelu",
                                tie_weights=True),
    # a small Multi30k translator
    "seq2seq-small": Seq2SeqConfig(share_embeddings=True),  # joint BPE: one table for both languages
    "seq2seq-tiny": Seq2SeqConfig(dim=64, n_heads=4, dim_hidden=128, n_encoder_blocks=2, n_decoder_blocks=2,
                                  src_vocab_size=1000, tgt_vocab_size=1000),
}


def get_preset(name: str) -> Config:
    """Return the named preset config or raise ``ValueError`` listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(sorted(PRESETS))}") from None


def config_from_dict(data: dict[str, Any]) -> Config:
    """Rebuild a config from ``to_dict`` output, rejecting unknown families and fields by name."""
    data = dict(data)
    family = data.pop("family", None)
    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}; expected one of {sorted(FAMILIES)}")
    cls = FAMILIES[family]
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown {family} config field(s): {', '.join(unknown)}")
    return cls(**data)


def load_config(path: str | Path) -> Config:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    return config_from_dict(data)


def apply_overrides(config: Config, overrides: list[str] | dict[str, Any]) -> Config:
    """Apply ``key=value`` overrides, parsing each value as the field's type; unknown keys are errors."""
    if isinstance(overrides, dict):
        items = list(overrides.items())
    else:
        items = []
        for item in overrides:
            if "=" not in item:
                raise ValueError(f"override {item!r} is not of the form key=value")
            key, value = item.split("=", 1)
            items.append((key.strip(), value.strip()))
    types = {f.name: f.type for f in fields(config)}
    changes: dict[str, Any] = {}
    for key, value in items:
        if key not in types:
            raise ValueError(f"unknown {config.family} config key {key!r}; valid keys: {', '.join(sorted(types))}")
        changes[key] = _parse_value(key, value, getattr(config, key), types[key])
    return config.replace(**changes)


def _parse_value(key: str, value: Any, current: Any, type_name: Any) -> Any:
    if not isinstance(value, str):
        return value
    allows_none = "None" in str(type_name)
    if allows_none and value.lower() in ("none", "null"):
        return None
    kind = type(current) if current is not None else (int if "int" in str(type_name) else str)
    try:
        if kind is bool:
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
            raise ValueError
        return kind(value)
    except ValueError:
        raise ValueError(f"{key}={value!r} is not a valid {kind.__name__}") from None

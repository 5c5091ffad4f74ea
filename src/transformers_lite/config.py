"""Model configs: frozen dataclasses, validated on construction, saved as JSON beside the weights.

Three families, one config each: ``ClassifierConfig`` (seed 000), ``GeneratorConfig`` (seed 004)
and ``Seq2SeqConfig`` (seed 001). ``PRESETS`` names ready-made configs (their training defaults are
in ``recipes``); ``models.build_model`` turns any config into its model. A config holds only what
the model is built from: training choices (learning rate, embedding initialisation, ...) live in
the recipe.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from . import validate
from .atomic import atomic_write_text
from .errors import ConfigError

ACTIVATIONS = ("relu", "gelu", "gelu_tanh")  # gelu_tanh: the tanh approximation GPT-2 uses
# fields renamed since the first release: old name -> new name (old run files are migrated on load)
RENAMED = {"context": "max_length", "tie_weights": "tie_embeddings", "tie_output": "tie_embeddings"}


def _positive(cfg: Any, *names: str) -> None:
    for name in names:
        validate.integer(name, getattr(cfg, name))


def _check_common(cfg: Any) -> None:
    _positive(cfg, "dim", "n_heads", "dim_hidden", "max_length")
    if cfg.dim % cfg.n_heads != 0:
        raise ConfigError(f"dim={cfg.dim} is not divisible by n_heads={cfg.n_heads}")
    validate.number("dropout", cfg.dropout, 0, 1, high_open=True)
    validate.choice("activation", cfg.activation, ACTIVATIONS)


def _check_encoder(cfg: Any) -> None:
    """What the classifier and the pretraining encoder share: sinusoidal positions long enough for
    ``max_length``, an input dropout rate, special ids inside the vocabulary."""
    _check_common(cfg)
    _positive(cfg, "vocab_size", "n_blocks", "position_encoding_length")
    validate.number("input_dropout", cfg.input_dropout, 0, 1, high_open=True)
    if cfg.max_length > cfg.position_encoding_length:
        raise ConfigError(
            f"max_length={cfg.max_length} must be at most position_encoding_length={cfg.position_encoding_length}"
        )
    for name in ("pad_id", "mask_id"):
        value = getattr(cfg, name, None)
        if value is not None and not 0 <= value < cfg.vocab_size:
            raise ConfigError(f"{name}={value} is outside the vocabulary of {cfg.vocab_size}")


class _ConfigMixin:
    family: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, **dataclasses.asdict(self)}  # type: ignore[call-overload]

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            atomic_write_text(path, text + "\n")
        return text

    def replace(self, **changes: Any):  # noqa: ANN201 - returns the same config class
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


@dataclass(frozen=True)
class ClassifierConfig(_ConfigMixin):
    """Review classifier: embedding -> sinusoidal position encoding -> encoder blocks -> head."""

    family: ClassVar[str] = "classifier"
    vocab_size: int = 7455
    n_labels: int = 5  # 5 stars, 2 sentiment classes, or 1 logit (seed 000's binary model)
    max_length: int = 50  # tokens per review; the seed head learns one weight per position
    dim: int = 32
    n_heads: int = 4
    dim_hidden: int = 128
    n_blocks: int = 1
    dropout: float = 0.1
    input_dropout: float = 0.0  # dropout after the position encoding: seed 003 uses the block's rate, seed 000 none
    activation: str = "relu"
    norm_first: bool = False
    qkv_bias: bool = True  # False: seed 000's first printout (251,456 parameters)
    head: str = "seed"  # "seed" (Dense(C,1) -> flatten -> Dense(T,K)) or "mean" (masked mean pooling)
    head_dropout: float = 0.0
    position_encoding_length: int = 1000
    pad_id: int | None = None
    bigram_buckets: int = 0  # rows of a hashed table of word pairs added to the word embeddings; 0: none
    members: int = 1  # > 1: an ensemble of this many classifiers trained together, probabilities averaged

    def __post_init__(self) -> None:
        _check_encoder(self)
        _positive(self, "n_labels")
        validate.choice("head", self.head, ("seed", "mean"))
        validate.number("head_dropout", self.head_dropout, 0, 1, high_open=True)
        validate.integer("bigram_buckets", self.bigram_buckets, low=0)
        validate.integer("members", self.members)


@dataclass(frozen=True)
class GeneratorConfig(_ConfigMixin):
    """Character GPT: token + learned position embeddings -> causal blocks -> Dense to vocabulary."""

    family: ClassVar[str] = "generator"
    vocab_size: int = 71
    max_length: int = 64  # the context: how many tokens the model sees at once
    dim: int = 32
    n_heads: int = 4
    dim_hidden: int = 128
    n_blocks: int = 3
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = False
    qkv_bias: bool = False
    tie_embeddings: bool = False  # the output Dense shares the token embedding table
    final_norm: bool = False  # a LayerNorm before the head (usual with pre-norm; the seed has none)
    position: str = "learned"  # "learned" (seed 004) or "rope"
    # "torch": PyTorch's default initialisation of each layer; "gpt2": GPT-2's (normal(0, 0.02) weights, zero
    # biases, and the output Dense of each residual branch scaled by 1/sqrt(2 n_blocks))
    init: str = "torch"
    head_bias: bool = True  # the output Dense has a bias (GPT-2's has none)
    norm_eps: float = 1e-5  # every LayerNorm's epsilon (GPT-2: 1e-5)
    # False is a teaching experiment (seed 004, section 3.5.2): without the causal mask every position sees the
    # characters it must predict, the training loss collapses and generation gets no better
    causal: bool = True

    def __post_init__(self) -> None:
        _check_common(self)
        _positive(self, "vocab_size", "n_blocks")
        validate.number("norm_eps", self.norm_eps, 0, low_open=True)
        validate.choice("position", self.position, ("learned", "rope"))
        validate.choice("init", self.init, ("torch", "gpt2"))
        if self.position == "rope" and (self.dim // self.n_heads) % 2:
            raise ConfigError(f"rope needs an even head size, got dim/n_heads = {self.dim // self.n_heads}")


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
    tie_embeddings: bool = True  # the output Dense shares the target embedding table
    pad_id: int = 1  # the tokenizers' convention: <unk>=0, <pad>=1, <bos>=2, <eos>=3

    def __post_init__(self) -> None:
        _check_common(self)
        _positive(self, "src_vocab_size", "tgt_vocab_size", "n_encoder_blocks", "n_decoder_blocks")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ConfigError(
                f"share_embeddings needs equal vocabularies, got {self.src_vocab_size} and {self.tgt_vocab_size}"
            )
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ConfigError(f"pad_id={self.pad_id} is outside the vocabularies")


@dataclass(frozen=True)
class EncoderLMConfig(_ConfigMixin):
    """The classifier's encoder (embedding, sinusoidal positions, encoder blocks) with a language-model
    head tied to the embedding, for pretraining on unlabelled text: ``objective="masked"`` predicts
    hidden words from both sides (BERT's masked LM), ``"causal"`` the next word from the left (a GPT).
    ``tlite train classifier --init-from RUN`` then starts a classifier from its encoder."""

    family: ClassVar[str] = "mlm"
    vocab_size: int = 8000
    max_length: int = 128
    dim: int = 32
    n_heads: int = 4
    dim_hidden: int = 128
    n_blocks: int = 1
    dropout: float = 0.1
    input_dropout: float = 0.0
    activation: str = "relu"
    norm_first: bool = False
    qkv_bias: bool = True
    position_encoding_length: int = 1000
    objective: str = "masked"
    pad_id: int | None = None
    mask_id: int | None = None

    def __post_init__(self) -> None:
        _check_encoder(self)
        validate.choice("objective", self.objective, ("masked", "causal"))


Config = ClassifierConfig | GeneratorConfig | Seq2SeqConfig | EncoderLMConfig
FAMILIES: dict[str, type] = {c.family: c for c in (ClassifierConfig, GeneratorConfig, Seq2SeqConfig, EncoderLMConfig)}

PRESETS: dict[str, Config] = {
    # seed 000: 251,552 trainable parameters (+32,000 position-encoding values)
    "seed-classifier": ClassifierConfig(),
    # the default for reviews (tuned on MARC dev, see README): masked mean pooling, pad-aware, heavy dropout,
    # word-pair vectors, and 8 such classifiers trained together with their probabilities averaged
    "classifier": ClassifierConfig(
        head="mean", max_length=128, dropout=0.5, head_dropout=0.5, pad_id=1, bigram_buckets=32768, members=8
    ),
    # seed 004: 44,487 trainable parameters
    "seed-gpt": GeneratorConfig(),
    # seed 004's model for the plays of the Complete Works (tlite data download complete-works)
    "complete-works": GeneratorConfig(),
    # a widely used CPU reference configuration ("baby GPT")
    "baby-gpt": GeneratorConfig(
        dim=128,
        n_heads=4,
        dim_hidden=512,
        n_blocks=4,
        max_length=64,
        dropout=0.0,
        norm_first=True,
        final_norm=True,
        qkv_bias=False,
        vocab_size=65,
        activation="gelu",
        tie_embeddings=True,
    ),
    # the default classifier's encoder, pretrained on unlabelled reviews (tlite train mlm)
    "mlm": EncoderLMConfig(max_length=128),
    # a small Multi30k translator
    "seq2seq-small": Seq2SeqConfig(share_embeddings=True),  # joint BPE: one table for both languages
    "seq2seq-tiny": Seq2SeqConfig(
        dim=64,
        n_heads=4,
        dim_hidden=128,
        n_encoder_blocks=2,
        n_decoder_blocks=2,
        src_vocab_size=1000,
        tgt_vocab_size=1000,
    ),
}


def get_preset(name: str) -> Config:
    """Return the named preset's model config or raise ``ConfigError`` listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown preset {name!r}; known presets: {', '.join(sorted(PRESETS))}") from None


def _unknown_keys(family: str, keys: list[str], known: set[str]) -> ConfigError:
    hints = [f"{k} (renamed {RENAMED[k]})" if RENAMED.get(k) in known else k for k in keys]
    return ConfigError(f"unknown {family} config key(s): {', '.join(hints)}; valid keys: {', '.join(sorted(known))}")


def config_from_dict(data: dict[str, Any]) -> Config:
    """Rebuild a config from ``to_dict`` output, rejecting unknown families and fields by name."""
    data = dict(data)
    family = data.pop("family", None)
    if family not in FAMILIES:
        raise ConfigError(f"unknown model family {family!r}; expected one of {sorted(FAMILIES)}")
    cls = FAMILIES[family]
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise _unknown_keys(family, unknown, known)
    try:
        return cls(**data)
    except TypeError as err:  # a value of the wrong type that the checks did not name
        raise ConfigError(f"invalid {family} config: {err}") from None


def load_config(path: str | Path) -> Config:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file holds one JSON object")
    return config_from_dict(data)


def apply_overrides(config: Config, overrides: list[str] | dict[str, Any]) -> Config:
    """Apply ``key=value`` overrides, parsing each value as the field's type; unknown keys are errors."""
    if isinstance(overrides, dict):
        items = list(overrides.items())
    else:
        items = []
        for item in overrides:
            if "=" not in item:
                raise ConfigError(f"override {item!r} is not of the form key=value")
            key, value = item.split("=", 1)
            items.append((key.strip(), value.strip()))
    types = {f.name: f.type for f in fields(config)}
    unknown = [k for k, _ in items if k not in types]
    if unknown:
        raise _unknown_keys(config.family, unknown, set(types))
    changes = {key: parse_value(key, value, getattr(config, key), types[key]) for key, value in items}
    return config.replace(**changes)


def parse_value(key: str, value: Any, current: Any, type_name: Any) -> Any:
    """Parse a command-line string as the type of a dataclass field (bool, int, float, str, or None)."""
    if not isinstance(value, str):
        return value
    allows_none = "None" in str(type_name)
    if allows_none and value.lower() in ("none", "null"):
        return None
    names = str(type_name)
    kind = type(current) if current is not None else (int if "int" in names else float if "float" in names else str)
    try:
        if kind is bool:
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
            raise ValueError
        return kind(value)
    except ValueError:
        raise ConfigError(f"{key}={value!r} is not a valid {kind.__name__}") from None

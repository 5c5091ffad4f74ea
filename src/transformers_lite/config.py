"""Model configs: frozen dataclasses, validated on construction, saved as JSON beside the weights.

One config per model family: ``ClassifierConfig`` (post 000), ``GeneratorConfig`` (post 004),
``Seq2SeqConfig`` (post 001) and ``EncoderLMConfig`` (pretraining the classifier's encoder). What
they share lives once: ``TransformerConfig`` (the blocks' shape, turned into a ``BlockSpec`` by
``block()``) and ``EncoderConfig`` (the classifier's and the pretraining model's encoder).
``models.build_model`` turns any config into its model. A config holds only what the model is built
from; training choices live in the recipe (``recipe``), and presets name whole recipes (``presets``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from . import validate
from .atomic import atomic_write_text, read_json
from .errors import ConfigError
from .layers import ACTIVATIONS, FEED_FORWARDS, BlockSpec
from .layers.norms import NORMS, NormSpec

# fields renamed since the first release: old name -> new name (old run files are migrated on load)
RENAMED = {"context": "max_length", "tie_weights": "tie_embeddings", "tie_output": "tie_embeddings"}
HEADS = ("flatten", "mean")
OLD_HEADS = {"seed": "flatten"}  # the flatten head's name until 0.2


def _positive(cfg: Any, *names: str) -> None:
    for name in names:
        validate.integer(name, getattr(cfg, name))


@dataclass(frozen=True)
class TransformerConfig:
    """What every model family shares: the shape of its blocks. Each family's config adds its own fields
    (and its own defaults); ``block()`` turns them into the ``BlockSpec`` every block is built from.

    Class attributes: ``family`` (its name), ``tokenizers`` (each tokenizer file of a run and the
    config field holding its vocabulary size) and ``data_fields`` (the fields training takes from the
    data: vocabulary sizes, labels, special ids)."""

    family: ClassVar[str]
    tokenizers: ClassVar[dict[str, str]] = {"tokenizer": "vocab_size"}
    data_fields: ClassVar[tuple[str, ...]] = ("vocab_size",)

    max_length: int = 50  # tokens the model reads at once
    dim: int = 32
    n_heads: int = 4
    dim_hidden: int = 128
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = False  # pre-norm (GPT-2) instead of the posts' post-norm
    qkv_bias: bool = True
    norm: str = "layer"  # every norm's kind: "layer" (LayerNorm, the posts') or "rms" (RMSNorm)
    qk_norm: bool = False  # self-attention normalises each head's queries and keys (with ``norm``) before the scores
    ffn: str = "mlp"  # the feed-forward's class: "mlp" (the posts' Dense, activation, Dense) or "swiglu" (Llama's)
    # self-attention's key/value heads, each shared by n_heads / kv_heads query heads (grouped-query attention;
    # 1: multi-query); None: one per head (multi-head attention)
    kv_heads: int | None = None
    bias: bool = True  # the blocks' Dense layers other than Q/K/V (attention's W_O, the feed-forward's) have biases

    def __post_init__(self) -> None:
        _positive(self, "dim", "n_heads", "dim_hidden", "max_length")
        validate.flags(self)
        if self.dim % self.n_heads != 0:
            raise ConfigError(f"dim={self.dim} is not divisible by n_heads={self.n_heads}")
        validate.number("dropout", self.dropout, 0, 1, high_open=True)
        validate.choice("activation", self.activation, tuple(ACTIVATIONS))
        validate.choice("norm", self.norm, tuple(NORMS))
        validate.choice("ffn", self.ffn, tuple(FEED_FORWARDS))
        validate.integer("kv_heads", self.kv_heads, optional=True)
        if self.kv_heads is not None and self.n_heads % self.kv_heads:
            raise ConfigError(f"kv_heads={self.kv_heads} must divide n_heads={self.n_heads} (1: multi-query attention)")
        if self.kv_heads == self.n_heads:  # one key/value head per head is multi-head attention: one spelling
            object.__setattr__(self, "kv_heads", None)

    def block(self, causal: bool = False) -> BlockSpec:
        """The spec of this model's blocks (a family's config adds what only its blocks read)."""
        return BlockSpec(
            self.dim,
            self.n_heads,
            self.dim_hidden,
            dropout=self.dropout,
            activation=self.activation,
            norm_first=self.norm_first,
            qkv_bias=self.qkv_bias,
            norm=NormSpec(self.norm),
            causal=causal,
            qk_norm=self.qk_norm,
            ffn=self.ffn,
            attention="multi-head" if self.kv_heads is None else "grouped-query",
            kv_heads=self.kv_heads,
            bias=self.bias,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, **dataclasses.asdict(self)}

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            atomic_write_text(path, text + "\n")
        return text

    def replace(self, **changes: Any):  # noqa: ANN201 - returns the same config class
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class EncoderConfig(TransformerConfig):
    """What the classifier and the pretraining encoder share (``models.Encoder`` is built from it):
    a vocabulary, sinusoidal positions long enough for ``max_length``, an input dropout rate, blocks."""

    SHAPE: ClassVar[tuple[str, ...]] = (
        "dim",
        "n_heads",
        "dim_hidden",
        "n_blocks",
        "activation",
        "norm_first",
        "qkv_bias",
        "norm",
        "qk_norm",
        "ffn",
        "kv_heads",
        "bias",
    )

    vocab_size: int = 7455
    n_blocks: int = 1
    input_dropout: float = 0.0  # dropout after the position encoding: post 003 uses the block's rate, post 000 none
    position_encoding_length: int = 1000
    pad_id: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive(self, "vocab_size", "n_blocks", "position_encoding_length")
        validate.number("input_dropout", self.input_dropout, 0, 1, high_open=True)
        if self.max_length > self.position_encoding_length:
            raise ConfigError(
                f"max_length={self.max_length} must be at most position_encoding_length={self.position_encoding_length}"
            )
        for name in ("pad_id", "mask_id"):
            value = getattr(self, name, None)
            if value is not None and not 0 <= value < self.vocab_size:
                raise ConfigError(f"{name}={value} is outside the vocabulary of {self.vocab_size}")


@dataclass(frozen=True)
class ClassifierConfig(EncoderConfig):
    """Review classifier (post 000): embedding -> sinusoidal position encoding -> encoder blocks -> head."""

    family: ClassVar[str] = "classifier"
    data_fields: ClassVar[tuple[str, ...]] = ("vocab_size", "n_labels", "pad_id", "label_names")

    n_labels: int = 5  # 5 stars, 2 sentiment classes, K classes of the data, or 1 logit (a binary model)
    label_names: tuple[str, ...] = ()  # the classes taken from the data, in order; () = the star tasks
    head: str = "flatten"  # "flatten" (post 000: Dense(C,1) -> flatten -> Dense(T,K)) or "mean" (masked mean pooling)
    head_dropout: float = 0.0
    bigram_buckets: int = 0  # rows of a hashed table of word pairs added to the word embeddings; 0: none
    members: int = 1  # > 1: an ensemble of this many classifiers trained together, probabilities averaged

    def __post_init__(self) -> None:
        object.__setattr__(self, "head", OLD_HEADS.get(self.head, self.head))
        super().__post_init__()
        _positive(self, "n_labels")
        if not isinstance(self.label_names, (list, tuple)) or not all(isinstance(n, str) for n in self.label_names):
            raise ConfigError(f"label_names must be a list of class names, got {self.label_names!r}")
        object.__setattr__(self, "label_names", tuple(self.label_names))
        if self.label_names and len(self.label_names) != max(self.n_labels, 2):
            raise ConfigError(f"label_names names {len(self.label_names)} classes for n_labels={self.n_labels}")
        validate.choice("head", self.head, HEADS)
        validate.number("head_dropout", self.head_dropout, 0, 1, high_open=True)
        validate.integer("bigram_buckets", self.bigram_buckets, low=0)
        validate.integer("members", self.members)

    @property
    def pads_to_length(self) -> bool:
        """Whether every input is padded to exactly ``max_length``: the flatten head learns one weight per
        position, so its inputs all have that many; the mean head reads any length."""
        return self.head == "flatten"


@dataclass(frozen=True)
class GeneratorConfig(TransformerConfig):
    """Character GPT: token + learned position embeddings -> causal blocks -> Dense to vocabulary."""

    family: ClassVar[str] = "generator"

    vocab_size: int = 71
    max_length: int = 64  # the context: how many tokens the model sees at once
    n_blocks: int = 3
    qkv_bias: bool = False
    tie_embeddings: bool = False  # the output Dense shares the token embedding table
    final_norm: bool = False  # a LayerNorm before the head (usual with pre-norm; the post has none)
    position: str = "learned"  # "learned" (post 004) or "rope"
    # "torch": PyTorch's default initialisation of each layer; "gpt2": GPT-2's (normal(0, 0.02) weights, zero
    # biases, and the output Dense of each residual branch scaled by 1/sqrt(2 n_blocks))
    init: str = "torch"
    head_bias: bool = True  # the output Dense has a bias (GPT-2's has none)
    norm_eps: float = 1e-5  # every LayerNorm's epsilon (GPT-2: 1e-5)
    # False is a teaching experiment (post 004, section 3.5.2): without the causal mask every position sees the
    # characters it must predict, so the training loss falls far below what generation achieves
    causal: bool = True
    # the modded-nanogpt speedrun's options, off by default (docs/training.md lists them):
    zero_init: bool = False  # each residual branch's closing Dense and the (untied) head start at zero
    logit_cap: float = 0.0  # > 0: logits soft-capped, cap · tanh(z / cap) (Gemma 2, modded-nanogpt: 30)
    value_residual: bool = False  # each later block mixes the first block's values into its own, by learned λ
    bigram_embedding: bool = False  # an exact table, one row per (previous token, token), added to the input
    embedding_shortcut: bool = False  # each later block's input mixed with the first block's, by learned λ

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive(self, "vocab_size", "n_blocks")
        validate.number("norm_eps", self.norm_eps, 0, low_open=True)
        validate.choice("position", self.position, ("learned", "rope"))
        validate.choice("init", self.init, ("torch", "gpt2"))
        validate.number("logit_cap", self.logit_cap, 0)
        if self.position == "rope" and (self.dim // self.n_heads) % 2:
            raise ConfigError(f"rope needs an even head size, got dim/n_heads = {self.dim // self.n_heads}")

    def block(self, causal: bool = False) -> BlockSpec:
        """The spec of the GPT's blocks: the shared one, with its norms' ε and the speedrun's mixes."""
        spec = super().block(causal)
        return dataclasses.replace(
            spec,
            norm=NormSpec(self.norm, self.norm_eps),
            value_residual=self.value_residual,
            shortcut=self.embedding_shortcut,
        )


@dataclass(frozen=True)
class Seq2SeqConfig(TransformerConfig):
    """Encoder-decoder translator (post 001, "Attention is all you need")."""

    family: ClassVar[str] = "seq2seq"
    tokenizers: ClassVar[dict[str, str]] = {"src_tokenizer": "src_vocab_size", "tgt_tokenizer": "tgt_vocab_size"}
    data_fields: ClassVar[tuple[str, ...]] = ("src_vocab_size", "tgt_vocab_size", "pad_id", "share_embeddings")

    src_vocab_size: int = 8000
    tgt_vocab_size: int = 8000
    max_length: int = 128
    dim: int = 256
    dim_hidden: int = 1024
    n_encoder_blocks: int = 3
    n_decoder_blocks: int = 3
    norm_first: bool = True
    share_embeddings: bool = False  # one table for source and target (needs a shared vocabulary)
    tie_embeddings: bool = True  # the output Dense shares the target embedding table
    pad_id: int = 1  # the tokenizers' convention: <unk>=0, <pad>=1, <bos>=2, <eos>=3
    # "none" is post 001's experiment: no position encoding at all (the encoder then reads a bag of words;
    # only the decoder's causal mask tells positions apart)
    position: str = "sinusoidal"

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive(self, "src_vocab_size", "tgt_vocab_size", "n_encoder_blocks", "n_decoder_blocks")
        validate.choice("position", self.position, ("sinusoidal", "none"))
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ConfigError(
                f"share_embeddings needs equal vocabularies, got {self.src_vocab_size} and {self.tgt_vocab_size}"
            )
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ConfigError(f"pad_id={self.pad_id} is outside the vocabularies")


@dataclass(frozen=True)
class EncoderLMConfig(EncoderConfig):
    """The classifier's encoder with a language-model head tied to the embedding, for pretraining on
    unlabelled text: ``objective="masked"`` predicts hidden words from both sides (BERT's masked LM),
    ``"causal"`` the next word from the left (a GPT). ``tlite train classifier --init-from RUN`` then
    starts a classifier from its encoder."""

    family: ClassVar[str] = "mlm"
    data_fields: ClassVar[tuple[str, ...]] = ("vocab_size", "pad_id", "mask_id")

    vocab_size: int = 8000
    max_length: int = 128
    objective: str = "masked"
    mask_id: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        validate.choice("objective", self.objective, ("masked", "causal"))


Config = ClassifierConfig | GeneratorConfig | Seq2SeqConfig | EncoderLMConfig
CONFIGS: dict[str, Any] = {c.family: c for c in (ClassifierConfig, GeneratorConfig, Seq2SeqConfig, EncoderLMConfig)}


def _unknown_keys(family: str, keys: list[str], known: set[str]) -> ConfigError:
    hints = [f"{k} (renamed {RENAMED[k]})" if RENAMED.get(k) in known else k for k in keys]
    return ConfigError(f"unknown {family} config key(s): {', '.join(hints)}; valid keys: {', '.join(sorted(known))}")


def config_from_dict(data: dict[str, Any]) -> Config:
    """Rebuild a config from ``to_dict`` output, rejecting unknown families and fields by name."""
    data = dict(data)
    family = data.pop("family", None)
    if family not in CONFIGS:
        raise ConfigError(f"unknown model family {family!r}; expected one of {sorted(CONFIGS)}")
    cls = CONFIGS[family]
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise _unknown_keys(family, unknown, known)
    try:
        return cls(**data)
    except TypeError as err:  # a value of the wrong type that the checks did not name
        raise ConfigError(f"invalid {family} config: {err}") from None


def load_config(path: str | Path) -> Config:
    data = read_json(path, "config file", ConfigError)
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

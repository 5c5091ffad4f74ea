"""``BlockSpec``: everything a transformer block is built from (a model config's ``block()`` gives it).

Its sub-layers are classes chosen by name (``attention``, ``ffn``: keys of ``layers.variants``), each
built from this spec alone, as litgpt builds the class its config's ``mlp_class_name`` names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .norms import NormSpec


@dataclass(frozen=True)
class BlockSpec:
    """The settings of a model's blocks. ``kv_heads``: self-attention's key/value heads (``None``: one per
    query head); ``bias``: the blocks' Dense layers other than Q/K/V have biases (``qkv_bias`` for those)."""

    dim: int
    n_heads: int
    dim_hidden: int
    dropout: float = 0.1
    activation: str = "relu"
    norm_first: bool = False
    qkv_bias: bool = True
    norm: NormSpec = field(default_factory=NormSpec)
    causal: bool = False  # self-attention sees only the past (a GPT's or a decoder's block)
    qk_norm: bool = False  # self-attention normalises each head's queries and keys with ``norm``
    value_residual: bool = False  # self-attention mixes the first block's values into its own (learned λ)
    shortcut: bool = False  # the block's input mixed with the first block's, x₀, by a learned pair (``Block``)
    ffn: str = "mlp"  # the feed-forward's class (``layers.variants.FEED_FORWARDS``)
    attention: str = "multi-head"  # self-attention's class (``layers.variants.ATTENTIONS``)
    kv_heads: int | None = None
    bias: bool = True

    @property
    def key_value_heads(self) -> int:
        """How many heads of keys and values self-attention computes (and a KV cache holds)."""
        return self.n_heads if self.kv_heads is None else self.kv_heads

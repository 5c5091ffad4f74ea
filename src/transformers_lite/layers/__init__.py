"""Hand-built transformer layers in the (B, T, C) layout."""

from .attention import CrossAttention, MultiHeadAttention, SelfAttention, scaled_dot_attention
from .blocks import CausalBlock, DecoderBlock, EncoderBlock
from .embedding import (
    BigramEmbedding,
    LearnedPositionEmbedding,
    SinusoidalPositionEncoding,
    TokenEmbedding,
    sinusoid_table,
)
from .feed_forward import FeedForward
from .heads import MeanPoolHead, SeedHead
from .kv_cache import KVCache
from .masks import attention_mask, causal_mask, padding_mask, padding_mask_from_ids
from .residual import Residual, maybe_dropout
from .rotary import RotaryEmbedding

__all__ = [
    "CrossAttention",
    "MultiHeadAttention",
    "SelfAttention",
    "scaled_dot_attention",
    "CausalBlock",
    "DecoderBlock",
    "EncoderBlock",
    "LearnedPositionEmbedding",
    "SinusoidalPositionEncoding",
    "TokenEmbedding",
    "BigramEmbedding",
    "sinusoid_table",
    "FeedForward",
    "MeanPoolHead",
    "SeedHead",
    "KVCache",
    "attention_mask",
    "causal_mask",
    "padding_mask",
    "padding_mask_from_ids",
    "Residual",
    "maybe_dropout",
    "RotaryEmbedding",
]

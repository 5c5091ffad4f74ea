"""Hand-built transformer layers in the (B, T, C) layout."""

from .activations import ACTIVATIONS, Activation, activation
from .attention import Attention, scaled_dot_attention
from .blocks import Block, BlockSpec, DecoderBlock
from .embedding import (
    BigramEmbedding,
    LearnedPositionEmbedding,
    SinusoidalPositionEncoding,
    TokenEmbedding,
    sinusoid_table,
)
from .feed_forward import FeedForward, FeedForwardLayer
from .grouped_attention import GroupedQueryAttention
from .heads import FlattenHead, MeanPoolHead
from .kv_cache import KVCache
from .masks import attention_mask, causal_mask, padding_mask, padding_mask_from_ids
from .norms import NORMS, Norm, NormSpec
from .residual import Residual, maybe_dropout
from .rotary import RotaryEmbedding
from .steps import KINDS, ROLES, Step
from .swiglu import SwiGLU
from .trace import NO_TRACE, Trace
from .variants import ATTENTIONS, FEED_FORWARDS, attention_class, feed_forward_class

__all__ = [
    "Attention",
    "scaled_dot_attention",
    "Block",
    "BlockSpec",
    "DecoderBlock",
    "LearnedPositionEmbedding",
    "SinusoidalPositionEncoding",
    "TokenEmbedding",
    "BigramEmbedding",
    "sinusoid_table",
    "ACTIVATIONS",
    "Activation",
    "activation",
    "ATTENTIONS",
    "FEED_FORWARDS",
    "attention_class",
    "feed_forward_class",
    "FeedForward",
    "FeedForwardLayer",
    "GroupedQueryAttention",
    "SwiGLU",
    "MeanPoolHead",
    "FlattenHead",
    "KVCache",
    "attention_mask",
    "causal_mask",
    "padding_mask",
    "padding_mask_from_ids",
    "Residual",
    "NORMS",
    "Norm",
    "NormSpec",
    "KINDS",
    "ROLES",
    "Step",
    "maybe_dropout",
    "RotaryEmbedding",
    "NO_TRACE",
    "Trace",
]

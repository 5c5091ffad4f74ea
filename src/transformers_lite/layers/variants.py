"""The layer variants a block is built from, by name: its feed-forward class (``ffn``) and its
self-attention class (``attention``), as litgpt's config names its MLP class.

Each class declares everything about itself (its weights, its equations, its steps with their kinds,
equations and roles, its rows of the parameter table, what it is in words); a block asks nothing else
of it. A new variant is its class in its own module and one entry here (and, for a step of a new kind,
that kind's hand rule in ``backprop.rules``). ``feed_forward_class`` and ``attention_class`` are the
lookups: a name not here is a ``ValueError`` naming the choices.
"""

from __future__ import annotations

from .attention import Attention
from .feed_forward import FeedForward, FeedForwardLayer
from .grouped_attention import GroupedQueryAttention
from .swiglu import SwiGLU

FEED_FORWARDS: dict[str, type[FeedForwardLayer]] = {"mlp": FeedForward, "swiglu": SwiGLU}
# grouped-query is chosen by a model's kv_heads (fewer key/value heads than heads), multi-head otherwise
ATTENTIONS: dict[str, type[Attention]] = {"multi-head": Attention, "grouped-query": GroupedQueryAttention}


def feed_forward_class(name: str) -> type[FeedForwardLayer]:
    """The feed-forward class called ``name``."""
    if name not in FEED_FORWARDS:
        raise ValueError(f"unknown feed-forward {name!r}; choose one of {', '.join(FEED_FORWARDS)}")
    return FEED_FORWARDS[name]


def attention_class(name: str) -> type[Attention]:
    """The attention class called ``name``."""
    if name not in ATTENTIONS:
        raise ValueError(f"unknown attention {name!r}; choose one of {', '.join(ATTENTIONS)}")
    return ATTENTIONS[name]

"""The last part of the path (``VARIANTS``): the layers today's models use where the posts use others, as
a model of this library computes them with ``--set ffn=swiglu`` and ``--set kv_heads=G`` (the ``llama-style``
preset has both): the gated feed-forward's backward, and grouped-query attention forward and backward.
Each states the step's forward and what is asked; the answer's formula is only in its last hint."""

from __future__ import annotations

import torch.nn.functional as F

from .catalog import (
    _gated,
    _grouped,
    grouped_attention_with_torch,
    grouped_backward_unsummed,
    grouped_heads_in_turn,
    silu_gate_without_product_rule,
)
from .exercise import Exercise, autograd, only
from .solutions import grouped_query_attention_backward, grouped_query_attention_forward, swiglu_backward

_GROUPED = "K̃ = repeat_interleave(K, H/G), Ṽ likewise; out = softmax(Q K̃ᵀ / √d_h + M) Ṽ, M = −∞ where masked"
_GROUPED_SHAPES = (
    "q: (H, T, D), k, v: (G, T, D) with G dividing H, mask: (T, T) bool, True where query t may read key s"
)

VARIANTS: tuple[Exercise, ...] = (
    Exercise(
        "swiglu-backward",
        "The gated feed-forward (SwiGLU), backward",
        "not in the posts: Llama's feed-forward (--set ffn=swiglu); its gate's SiLU is post 001's softrelu",
        "softrelu(x) = x * sigmoid(x) (post 001 defines it; no post gates a feed-forward)",
        "h = SiLU(a) ⊙ u, SiLU(a) = a σ(a): a = x W_gᵀ the gate's pre-activations, u = x W_uᵀ the up projection",
        "∂a and ∂u, given ∂h",
        ("a", "u", "dh"),
        ("da", "du"),
        "a, u, dh: (N, F)\nda, du: (N, F)",
        (
            "h is a product of two factors: each gets ∂h times the other.",
            "SiLU(a) = a σ(a) is itself a product: its derivative needs the product rule, with σ' = σ (1 − σ).",
            "∂a = ∂h ⊙ u ⊙ σ(a)(1 + a(1 − σ(a))), ∂u = ∂h ⊙ SiLU(a): "
            "s = torch.sigmoid(a); da = dh * u * s * (1 + a * (1 - s)); du = dh * a * s.",
        ),
        swiglu_backward,
        _gated,
        autograd(lambda a, u: F.silu(a) * u, ("a", "u"), "dh"),
        {
            "SiLU's derivative taken as σ(a) alone (the product rule of a σ(a) forgotten)": only(
                silu_gate_without_product_rule
            )
        },
    ),
    Exercise(
        "grouped-query-attention-forward",
        "Grouped-query attention, forward",
        "not in the posts: Llama's and Mistral's attention (--set kv_heads=G); every post gives each head its "
        "own keys and values",
        "—",
        _GROUPED,
        "out for every query head at once",
        ("q", "k", "v", "mask"),
        ("out",),
        _GROUPED_SHAPES + "\nout: (H, T, D)",
        (
            "Each of the G key/value heads serves H / G query heads: give every query head the keys and values "
            "of its group, then it is ordinary attention.",
            "Query heads 0 … r−1 read key/value head 0, the next r head 1, … (r = H / G): repeat each head in "
            "place, not the whole stack in turn.",
            "r = H // G; k, v = k.repeat_interleave(r, 0), v.repeat_interleave(r, 0); then "
            "torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(D)).masked_fill(~mask, float('-inf')), -1) @ v.",
        ),
        grouped_query_attention_forward,
        _grouped,
        lambda q, k, v, mask, do: grouped_attention_with_torch(q, k, v, mask),
        {
            "the stack of key/value heads repeated in turn (head h reads h % G), not each head for its own group": only(
                grouped_heads_in_turn
            )
        },
    ),
    Exercise(
        "grouped-query-attention-backward",
        "Grouped-query attention, backward",
        "not in the posts: Llama's and Mistral's attention (--set kv_heads=G)",
        "—",
        _GROUPED,
        "∂Q, and ∂K and ∂V for the G key/value heads, given ∂out",
        ("q", "k", "v", "mask", "do"),
        ("dq", "dk", "dv"),
        _GROUPED_SHAPES + ", do: (H, T, D)\ndq: (H, T, D), dk, dv: (G, T, D)",
        (
            "Repeat K and V as the forward does, and attention's backward gives ∂Q, ∂K̃ and ∂Ṽ for H heads.",
            "A key/value head was read by r = H / G query heads: like a tensor read by r steps, it gets the "
            "sum of their gradients.",
            "∂K_g = Σ of the gradients of its r copies (heads g·r … g·r + r − 1 of K̃), ∂V_g likewise: "
            "dk = dk_repeated.reshape(G, r, T, D).sum(1), dv = dv_repeated.reshape(G, r, T, D).sum(1).",
        ),
        grouped_query_attention_backward,
        _grouped,
        autograd(lambda q, k, v, mask: grouped_attention_with_torch(q, k, v, mask), ("q", "k", "v"), "do"),
        {
            "each key/value head's gradient taken from one of its query heads, not summed over the r": only(
                grouped_backward_unsummed
            )
        },
    ),
)

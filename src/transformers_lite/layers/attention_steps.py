"""The steps one attention layer computes, as it is configured (``attention_steps``): what ``Attention``
declares to a trace, and what ``scaled_dot_attention`` declares when it is called on its own.

Notation as in ``attention``: T query length, S key/value length, H heads, D = d_h head size; Q̂ a
normalised Q (QK-norm), Q′ a rotated one (rotary positions). The kinds of the steps pick their hand rules
(``backprop.rules``).
"""

from __future__ import annotations

import math
from dataclasses import replace

from .norms import NormSpec, norm_step
from .steps import Step, dense


def attention_steps(
    dim: int,
    n_heads: int,
    *,
    bias: bool,
    out_bias: bool = True,
    rope: bool = False,
    reads: str = "x",
    kind: str = "self",
    qk_norm: NormSpec | None = None,
    value_mix: bool = False,
) -> dict[str, Step]:
    """The steps of one attention layer as it is configured: ``reads`` is what its queries (and, but
    for cross-attention, keys and values) are computed from (``x``, ``LN(x)``); ``kind`` is ``self``
    (every position reads every other, padding keys aside), ``causal`` (each reads itself and the past)
    ``decoder`` (the past, and padding) or ``cross`` (a decoder's positions read the encoder's output ``m``);
    ``qk_norm``: the norm of each head's queries and keys; ``value_mix``: the first block's values mixed in;
    ``bias``, ``out_bias``: the Q/K/V Dense's and the output Dense's. Each step says its role (``ROLES``)
    where something outside the layer asks for it."""
    d = dim // n_heads
    cross = kind == "cross"
    keys_axis = "S" if cross else "T"  # what the keys run over: the source's tokens, or the same tokens
    scores_axes = f"HT{keys_axis}"
    hat = "\u0302" if qk_norm else ""  # Q̂: normalised
    rotated = "′" if rope else ""
    q_, k_ = f"Q{hat}{rotated}", f"K{hat}{rotated}"
    heads = f"split into H = {n_heads} heads of d_h = {d}"

    def projection(letter: str, part: int) -> Step:  # part: Q, K or V, the rows [part·C, (part + 1)·C)
        source = "m" if cross and letter != "Q" else reads
        # the posts' Q = W_Q X (post 004; post 003's Dense has a bias): their X whatever this model reads
        post_x = "m" if source == "m" else "X"
        ours, post, words = dense(source, f"W_{letter}", f"b_{letter}" if bias else None, post_x=post_x)
        what = {
            "Q": "what each position looks for",
            "K": "what each position offers to be found by" if not cross else "what each source token offers",
            "V": "what each position passes on when read" if not cross else "what each source token passes on",
        }[letter]
        where = " (m: the encoder's output)" if source == "m" else ""
        axes = f"H{keys_axis}D" if letter != "Q" else "HTD"
        return Step(
            "projection",
            axes,
            f"{letter} = {ours}, {heads}{where}",
            f"{letter} = {post}",
            what,
            rows=(part * dim, (part + 1) * dim),
            computes=f"one third of the one [Q; K; V] Dense ({letter}): {words.removeprefix('a Dense: ')}, {heads}",
            role={"Q": "query", "K": "key", "V": "value"}[letter],
        )

    readers = "target position" if cross else "query"
    keys = "source token" if cross else "key"
    masked_what = {
        "self": "padding keys",
        "causal": "later positions (the future)",
        "decoder": "later positions (the future) and padding",
        "cross": "source padding",
    }[kind]
    # the posts mask only the future (post 004: the mask replaces the scores by −∞ where it is false); post 000
    # masks no padding, and post 001's draft adds its 0/1 padding mask: a padding mask is ours alone
    causal_post = kind in ("causal", "decoder")
    steps = {"q": projection("Q", 0), "k": projection("K", 1), "v": projection("V", 2)}
    if value_mix:
        steps["v_mixed"] = Step(
            "mix",
            f"H{keys_axis}D",
            "V ← λ₀ V + λ₁ V₁: V₁ the first block's values, λ learned (0.5 and 0.5 at the start)",
            None,
            "the values mixed with the first block's (value residual): what a position passes on keeps a "
            "direct line to the first block's",
        )
    if qk_norm:
        for letter, axes in (("Q", "HTD"), ("K", f"H{keys_axis}D")):
            what = f"each head's {'query' if letter == 'Q' else 'key'} vector normalised over its d_h = {d} channels"
            plain = norm_step(qk_norm, letter, what, axes)
            steps[f"{letter.lower()}_norm"] = Step(
                plain.kind,
                axes,
                f"{letter}{hat} = {plain.ours}",
                None,
                f"{what} (QK-norm): the scores stay bounded however large Q and K grow",
                eps=qk_norm.eps,
                computes=plain.computes,
            )
    if rope:
        for letter, axes in (("Q", "HTD"), ("K", f"H{keys_axis}D")):
            steps[f"{letter.lower()}_rotated"] = Step(
                "rotary",
                axes,
                f"{letter}{hat}′ = RoPE({letter}{hat}): channels (2i, 2i+1) at position t turned by t / 10000^(2i/d_h)",
                None,
                "the same vectors, each pair of channels turned by an angle that grows with the position, so "
                "Q′·K′ depends on how far apart two positions are",
            )
    steps |= {
        "scores": Step(
            "scores", scores_axes, f"{q_} {k_}ᵀ", "Kᵀ Q", f"row i: how well {readers} i matches each {keys}"
        ),
        "scaled": Step(
            "scale",
            scores_axes,
            f"S = {q_} {k_}ᵀ / √d_h, √{d} = {math.sqrt(d):.3g}",
            "S = (1/√d_h) Kᵀ Q",
            "the scores divided by √d_h, so the softmax does not saturate as d_h grows",
            factor=1 / math.sqrt(d),
            computes=f"multiplied by the constant 1/√d_h = 1/√{d} = {1 / math.sqrt(d):.3g}",
        ),
        "mask": Step(
            "mask",
            scores_axes,
            f"M = 0 where {readers} i may read {keys} j, −∞ where not ({masked_what})",
            "mask = triu(trues(N, N)): true where key j ≤ query i (post 004)" if causal_post else None,
            f"what is added to the scores: −∞ hides {masked_what}, exp(−∞) = 0",
        ),
        "masked": Step(
            "masked",
            scores_axes,
            "S + M",
            "ifelse.(mask, S, −∞)" if causal_post else None,
            "the scaled scores with the mask added (−∞: the lowest float)",
        ),
        "weights": Step(
            "softmax",
            scores_axes,
            "P = softmax(S + M) over keys (each row sums to 1)",
            f"P = softmax({'ifelse.(mask, S, −∞)' if causal_post else 'S'}; dims=1): each column sums to 1",
            f"row i: how much {readers} i reads from each {keys}",
            role="cross weights" if cross else "weights",
        ),
        "heads": Step(
            "weighted_sum", "HTD", "A = P V", "A = V P", "per head, the weighted sum of the values", role="heads"
        ),
        "merged": Step(
            "merge_heads",
            "TC",
            f"[A₁ … A_{n_heads}]: the heads side by side, (T, H·d_h)",
            "vcat(A₁, …, A_H)",
            "the heads side by side again",
        ),
    }
    weights = steps["weights"]  # with no mask given (a call on its own): the softmax of the scores alone
    steps["weights, no mask"] = replace(
        weights, ours=weights.ours.replace("S + M", "S"), post="P = softmax(S; dims=1): each column sums to 1"
    )
    # the posts stack the heads' outputs (permutedims and reshape in post 000: vcat), then their Dense
    ours, post, words = dense("[A₁ … A_H]", "W_O", "b_O" if out_bias else None, post_x="vcat(A₁, …, A_H)")
    steps["out"] = Step(
        "projection",
        "TC",
        ours,
        post if out_bias else None,  # the posts' W_O has its bias
        "what attention adds to the residual stream",
        computes=words,
        role="output",
    )
    return steps

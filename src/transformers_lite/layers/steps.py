"""``Step``: one step of a layer's equations, declared by the layer that computes it.

Each layer builds the records of its steps from its own settings when it is made (``attention_steps``,
``feed_forward_steps``, ``norm_step``, ...), and hands them to the trace it is given
(``Trace.declare``), so what a trace says about a step (its equation here and in the posts, its axes,
what it means) is true of *this* model: pre-norm or post-norm input, a bias or none, the activation
by name, rotary positions, a tied table, the value of d_h. ``kind`` says what the step computes; the
hand-derived backward rules are chosen by it (``backprop.rules``), never by a step's name. ``role``
says what part the step plays in its layer (the queries, the attention weights, a feed-forward's gate or
its closing Dense, ``ROLES``): the inspector, the exercises and the page ask for a step by its role and
where it sits (``trace.Place``), never by a name they assemble.

Notation (the posts' letters): x the residual stream entering a sub-layer, LN layer norm, RMS RMS
norm, E the token table, PE the position table, Q K V queries, keys and values, d_h the head size,
S the scaled scores, M the mask (0 where a query may read a key, −∞ where not), P = softmax(S + M)
the attention weights, A = P V the heads' output (the posts' A = V softmax(Kᵀ Q / √d_h)), W and b a
Dense's weight and bias. Ours is row-major (a position is a row); the posts are column-major, so each
of their equations is ours transposed (``Q = W_Q X`` is our ``Q = X W_Qᵀ``, their ``Kᵀ Q`` our ``Q Kᵀ``).

Each step says three things from the same settings, so they cannot disagree: ``ours`` (its equation here),
``computes`` (the same in words: a bias or none, the activation and the norm by name, the constant it
multiplies by; empty where its kind's words in ``KINDS``, true of every step of the kind, say all) and
``post``, the step as the posts write it (seeds 000 and 003, the classifier; 004, the GPT; 001, the
translator), or ``None`` where no post computes it this way: pre-norm's norms and sums, a final norm,
GELU, RMSNorm, QK-norm, rotary positions, a √C-scaled or tied table, soft-capping, the speedrun's mixes,
padding masks (post 000 masks nothing; post 001's draft adds a 0/1 mask), the mean-pooling head. Such a
step's posts' column reads ``NOT_IN_POSTS``. A step the posts compute on another input (pre-norm's Q
reads LN(x)) is quoted with the posts' own input (``Q = W_Q X``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from torch import Tensor

# a layer also declares its rows of the parameter table (``summary``): (level, name, description, trainable,
# fixed), counting its parameters with ``Count`` (which counts a parameter shared by two layers once)
SummaryRow = tuple[int, str, str, int, int]
Count = Callable[[Iterable[Tensor]], int]

# what each kind of step computes, true of every step of the kind (the page's legend and ``docs/backprop.md``
# list them); a step whose settings say more (its bias, its activation, its norm) says it in ``Step.computes``
KINDS: dict[str, str] = {
    "tokens": "the token ids read",
    "embedding": "rows of a table, one per id read",
    "position": "rows of a position table, one per position",
    "sum": "terms added (the first block's input)",
    "projection": "a Dense: what it reads times a weight matrix (and a bias, where the layer has one)",
    "tied_output": "a Dense whose weight is the token table E itself",
    "norm": "each row normalised, then scaled",
    "rotary": "pairs of channels rotated by an angle that grows with the position (RoPE)",
    "scores": "each query's dot product with each key",
    "scale": "multiplied by a constant",
    "mask": "what is added to the scores: 0 where a query may read a key, −∞ where not",
    "masked": "the scores with the mask added",
    "softmax": "exponentials normalised to sum to 1",
    "weighted_sum": "each head's weighted sum of the values",
    "merge_heads": "the heads side by side again",
    "residual_sum": "the residual stream plus what a sub-layer adds",
    "mean_pool": "the mean over the positions read",
    "mixture": "an ensemble's members' probabilities averaged (as log-probabilities)",
    "identity": "the same tensor under the name the model hands back",
    "lm_head": "a Dense, its activation, a norm and the tied table in one step (pretraining's head)",
    "activation": "a Dense, then a nonlinearity on each entry",
    "soft_cap": "squashed into (−c, c): c · tanh(z / c)",
    "mix": "two tensors weighted by a learned pair of numbers: λ₀ a + λ₁ b",
    "product": "two tensors multiplied entry by entry",
    "repeat_heads": "each key/value head repeated for the query heads that share it",
}
# the part a step plays in its layer, where something outside the layer asks for it (the inspector's maps, the
# exercises' inputs, the page): asked for by role, never found from a name or from the layer's structure
ROLES: dict[str, str] = {
    "query": "the queries Q: what each position looks for",
    "key": "the keys K: what each position (or source token) offers to be found by",
    "value": "the values V: what each position (or source token) passes on when read",
    "weights": "self-attention's weights: each position's softmax over the positions it may read",
    "cross weights": "cross-attention's weights: each target position's softmax over the source tokens",
    "heads": "the heads' outputs, one per head: what switching a head off zeroes",
    "output": "attention's output Dense W_O, over the heads side by side",
    "gate": "a gated feed-forward's gate: the Dense whose nonlinearity scales the up projection",
    "up": "the feed-forward's Dense into its hidden units (C to F)",
    "down": "the feed-forward's Dense back to the residual stream (F to C): it closes the branch",
}
NOT_IN_POSTS = "not in the posts"  # the posts' column of a step no post computes (``Step.post`` None)
FAMILIES_OF_KINDS = ("activation", "norm")  # "activation:gelu", "norm:layer": one kind per name of the family


@dataclass(frozen=True)
class Step:
    """What one step is. ``axes``: one letter per axis of its tensor without the batch, ours (row-major);
    the posts' shape is the same letters reversed. ``computes``: what it computes, in words, as this model
    is configured (empty: its kind's words say all). ``role``: the part it plays in its layer (``ROLES``;
    empty: none asked for). ``rows``, ``factor`` and ``eps`` are what its hand rule needs."""

    kind: str
    axes: str
    ours: str  # the equation as computed here (row-major)
    post: str | None  # as the posts write it (column-major); None: no post computes this step this way
    meaning: str
    rows: tuple[int, int] | None = None  # Q, K, V: the rows [start, stop) of the one [Q; K; V] Dense it computes
    factor: float | None = None  # the constant it multiplies by: 1/√d_h, an embedding's √C; a soft cap's c
    eps: float | None = None  # a norm's ε
    computes: str = ""
    role: str = ""

    def __post_init__(self) -> None:
        base, _, name = self.kind.partition(":")
        if base not in KINDS or bool(name) != (base in FAMILIES_OF_KINDS):
            raise ValueError(f"step kind {self.kind!r}: choose one of {', '.join(KINDS)} (activation:NAME, norm:NAME)")
        if self.role and self.role not in ROLES:
            raise ValueError(f"step role {self.role!r}: choose one of {', '.join(ROLES)}")

    def to_dict(self) -> dict[str, object]:
        """The step as the trace JSON shows it."""
        kind_meaning = KINDS[self.kind.partition(":")[0]]
        return {
            "kind": self.kind,
            "kind_meaning": kind_meaning,
            "computes": self.computes or kind_meaning,  # the guided walk's sentence says this, not the kind's words
            "axes": f"({', '.join(self.axes)})",
            "post_axes": f"({', '.join(reversed(self.axes))})",
            "equation": self.ours,
            "post_equation": NOT_IN_POSTS if self.post is None else self.post,
            "in_posts": self.post is not None,
            "meaning": self.meaning,
            "role": self.role,
        }


def dense(x: str, w: str, bias: str | None, *, post_x: str | None = None) -> tuple[str, str, str]:
    """A Dense written ours, the posts' way and in words: ``x Wᵀ + b``, ``W X .+ b`` and "a Dense: x times
    Wᵀ, plus the bias b" (``bias`` None: none, and the words say so). ``post_x``: what the posts' Dense reads
    when it is not ``x`` (their ``X`` where this model reads ``LN(x)``)."""
    ours = f"{x} {w}ᵀ" + (f" + {bias}" if bias else "")
    post = f"{w} {post_x or x}" + (f" .+ {bias}" if bias else "")
    words = f"a Dense: {x} times {w}ᵀ, " + (f"plus the bias {bias}" if bias else "no bias")
    return ours, post, words

"""What each step of a forward trace is: its axes, its equation as computed here (row-major) and as the
posts write it (column-major), and what it means. The inspector's forward view shows these beside the
numbers; ``step_info`` names any step of a trace by its last part and where it sits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepInfo:
    axes: str  # our axes without the batch, one letter each
    ours: str  # the equation as computed here (row-major)
    post: str  # the same step as the posts write it (column-major)
    meaning: str


_FF = "the feed-forward"
STEPS: dict[str, StepInfo] = {  # by the step's own name (the last part of the trace name)
    "tokens": StepInfo("T", "ids = tokenizer(text)", "ids = tokenizer(text)", "the ids the model reads"),
    "embedding": StepInfo("TC", "E[ids]", "E[:, ids]", "one learned row of the table E per token"),
    "position": StepInfo(
        "TC", "P[t]", "PE(:, t)", "where each token is: a sinusoidal or learned vector per position, added"
    ),
    "pairs": StepInfo("TC", "B[hash(previous, id)]", "—", "a vector per two-word phrase, added (not in the posts)"),
    "input": StepInfo(
        "TC",
        "X = E[ids] + P[t] (+ B[pairs] where the model adds word pairs)",
        "X = E[:, ids] .+ PE",
        "what the first block reads (the sum of the steps above it)",
    ),
    "q": StepInfo("HTD", "Q = X W_Qᵀ, split into H heads", "Q = W_Q X", "what each position looks for"),
    "k": StepInfo("HSD", "K = X W_Kᵀ, split into H heads", "K = W_K X", "what each position offers to be found by"),
    "v": StepInfo("HSD", "V = X W_Vᵀ, split into H heads", "V = W_V X", "what each position passes on when read"),
    "scores": StepInfo("HTS", "Q Kᵀ", "Kᵀ Q", "row i: how well query i matches each key"),
    "scaled": StepInfo("HTS", "Q Kᵀ / √D", "Kᵀ Q / √D", "the scores divided by √D, so softmax does not saturate"),
    "mask": StepInfo(
        "HTS",
        "1 = may read, 0 = masked (the scaled scores get −∞ there before the softmax)",
        "−∞ where masked",
        "which keys each query may read (padding, the future)",
    ),
    "weights": StepInfo(
        "HTS",
        "A = softmax(Q Kᵀ / √D + mask) over keys",
        "softmax(Kᵀ Q / √D) over the first dimension",
        "row i: how much position i reads from each position (each row sums to 1)",
    ),
    "heads": StepInfo("HTD", "A V", "V A", "per head, the weighted sum of the values"),
    "merged": StepInfo("TC", "concat(heads)", "vcat(heads...)", "the heads side by side again"),
    "out": StepInfo("TC", "merged W_Oᵀ + b_O", "W_O merged .+ b_O", "what attention adds to the residual stream"),
    "hidden": StepInfo("TF", "act(x W₁ᵀ + b₁)", "act.(W₁ x .+ b₁)", f"{_FF}'s hidden units after the nonlinearity"),
    "sum": StepInfo(
        "TC",
        "x + sublayer(x); pre-norm: x + sublayer(LayerNorm(x))",
        "x + sublayer(x)",
        "the residual stream after this sub-layer",
    ),
    "norm": StepInfo(
        "TC",
        "LayerNorm(x)",
        "LayerNorm(x)",
        "each position's vector scaled to mean 0, variance 1 (then γ, β): in a post-norm block (the posts) the "
        "sum after the sub-layer, in a pre-norm block the sub-layer's input",
    ),
    "final_norm": StepInfo("TC", "LayerNorm(x)", "LayerNorm(x)", "the last normalisation before the output layer"),
    "logits": StepInfo("TV", "x W_outᵀ + b", "W_out x .+ b", "one score per vocabulary entry"),
    "probabilities": StepInfo("TV", "softmax(logits)", "softmax(logits)", "the model's prediction"),
    "pooled": StepInfo("C", "mean over the words", "mean(x, dims=2)", "the review as one vector"),
}
_FEED_FORWARD_OUT = StepInfo("TC", "hidden W₂ᵀ + b₂", "W₂ hidden .+ b₂", f"what {_FF} adds to the residual stream")


def step_info(name: str, ndim: int) -> StepInfo:
    """What the step ``name`` (a full trace name) is; its axes fitted to the tensor's ``ndim``."""
    parts = name.split(".")
    own = parts[-1]
    if own == "out" and len(parts) > 1 and parts[-2] == "feed_forward":
        info = _FEED_FORWARD_OUT
    elif own == "logits" and ndim == 1 and name == "logits":
        info = StepInfo(
            "K",
            "the model's class scores",
            "the model's class scores",
            "one score per class (an ensemble: the log of its members' mean probability)",
        )
    elif own == "logits" and ndim == 1:
        info = StepInfo(
            "K", "pooled W_outᵀ + b (flatten head: scores W_outᵀ + b)", "W_out pooled .+ b", "one score per class"
        )
    elif own == "probabilities" and ndim == 1:
        info = StepInfo("K", "softmax(logits)", "softmax(logits)", "the probability of each class")
    elif own == "scores" and ndim == 1:
        info = StepInfo("T", "x w", "w' x", "one score per word, then the flattened Dense")
    elif own in ("k", "v") and len(parts) > 1 and parts[-2] == "cross_attention":
        letter = own.upper()
        info = StepInfo(
            "HSD",
            f"{letter} = M W_{letter}ᵀ (M: the encoder's output)",
            f"{letter} = W_{letter} M",
            STEPS[own].meaning.replace("position", "source token"),
        )
    elif own in ("scores", "weights") and len(parts) > 1 and parts[-2] == "cross_attention":
        base = STEPS[own]
        what = "matches" if own == "scores" else "reads from"
        info = StepInfo(base.axes, base.ours, base.post, f"row i: how much target position i {what} each source token")
    else:
        info = STEPS.get(own, StepInfo("?" * ndim, own, own, own.replace("_", " ")))
    if len(info.axes) != ndim:  # a mask broadcast over heads or queries
        info = StepInfo(info.axes[-ndim:] if ndim else "", info.ours, info.post, info.meaning)
    return info

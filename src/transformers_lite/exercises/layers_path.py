"""The first half of the path (``LAYERS``): a Dense layer, the activations, softmax, cross-entropy and
the norms. Each states the step's forward (the posts' way and ours) and what is asked; the answer's
formula is only in its last hint."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .catalog import (
    _dense,
    _logits,
    _norm,
    _pre_activation,
    _scores,
    layer_norm_posts,
    softmax_jvp_over_queries,
    softmax_over_columns,
    unbiased_layer_norm,
    unbiased_std_layer_norm,
)
from .exercise import Exercise, autograd, only
from .solutions import (
    cross_entropy_backward,
    dense_backward,
    dense_forward,
    gelu_backward,
    layer_norm_backward,
    layer_norm_forward,
    relu_backward,
    rms_norm_backward,
    softmax_backward,
    softmax_forward,
)

GIVEN_DY = "given ∂y, the loss's gradient with respect to the step's output"

LAYERS: tuple[Exercise, ...] = (
    Exercise(
        "dense-forward",
        "A Dense layer, forward",
        "post 000: the Dense layer",
        "Y = W X .+ b (a token per column)",
        "y = x Wᵀ + b (a token per row)",
        "y, for every row of x at once",
        ("x", "w", "b"),
        ("y",),
        "x: (N, in), w: (out, in), b: (out,)\ny: (N, out)",
        (
            "Each row of x is one token; each row of w makes one output.",
            "The posts multiply W X with tokens as columns; with tokens as rows, the product is transposed.",
            "y = x @ w.T + b (b broadcasts over the rows).",
        ),
        dense_forward,
        _dense,
        lambda x, w, b, dy: F.linear(x, w, b),
    ),
    Exercise(
        "dense-backward",
        "A Dense layer, backward",
        "post 000: the linear layer's gradients (∂L/∂W, ∂L/∂X), which it extends to mul4d",
        "Y = W X .+ b",
        "y = x Wᵀ + b",
        f"∂x, ∂W and ∂b, {GIVEN_DY}",
        ("x", "w", "b", "dy"),
        ("dx", "dw", "db"),
        "x: (N, in), w: (out, in), b: (out,), dy: (N, out)\ndx: (N, in), dw: (out, in), db: (out,)",
        (
            "Each gradient has the shape of what it is the gradient of: let the shapes pick the products.",
            "y[n, o] = Σ_i x[n, i] w[o, i] + b[o]: differentiate one element, then sum over what is repeated.",
            "∂x = ∂y W, ∂W = ∂yᵀ x, ∂b = Σ_rows ∂y: dx = dy @ w, dw = dy.T @ x, db = dy.sum(0).",
        ),
        dense_backward,
        _dense,
        autograd(lambda x, w, b: F.linear(x, w, b), ("x", "w", "b")),
    ),
    Exercise(
        "relu-backward",
        "ReLU, backward",
        "post 000: the feed-forward's activation (its gradient is left to Flux there)",
        "Y = relu.(A)",
        "y = max(a, 0), element by element",
        f"∂a, {GIVEN_DY}",
        ("a", "dy"),
        ("da",),
        "a: (N, F) the pre-activations x W₁ᵀ + b₁, dy: (N, F)\nda: (N, F)",
        (
            "ReLU passes a positive value unchanged and stops a negative one.",
            "Its derivative is 1 where a > 0 and 0 elsewhere.",
            "∂a = ∂y ⊙ [a > 0]: da = dy * (a > 0).",
        ),
        relu_backward,
        _pre_activation,
        autograd(lambda a: torch.relu(a), ("a",)),
    ),
    Exercise(
        "gelu-backward",
        "GELU, backward",
        "not in the posts: the GPT-2 blocks' activation (--set activation=gelu), exact, with erf",
        "—",
        "y = GELU(a) = a Φ(a), Φ the standard normal's CDF",
        f"∂a, {GIVEN_DY}",
        ("a", "dy"),
        ("da",),
        "a: (N, F), dy: (N, F)\nda: (N, F)",
        (
            "A product of two functions of a: the product rule.",
            "Φ(a) = (1 + erf(a / √2)) / 2, and Φ'(a) = φ(a) = exp(−a²/2) / √(2π), the normal's density.",
            "∂a = ∂y ⊙ (Φ(a) + a φ(a)).",
        ),
        gelu_backward,
        _pre_activation,
        autograd(lambda a: F.gelu(a), ("a",)),
    ),
    Exercise(
        "softmax-forward",
        "Softmax, forward",
        "post 000: attention's softmax",
        "softmax(S; dims=1): each column sums to 1",
        "P = softmax(S) over the last axis: each row sums to 1",
        "P, numerically stable for large scores",
        ("s",),
        ("p",),
        "s: (H, T, T) the scaled scores of each head\np: (H, T, T)",
        (
            "Exponentiate, then divide each row by its sum.",
            "exp overflows for large scores: subtract each row's maximum first (the softmax does not change).",
            "e = torch.exp(s - amax(-1, keepdim=True)); p = e / e.sum(-1, keepdim=True).",
        ),
        softmax_forward,
        _scores,
        lambda s, p, dp: torch.softmax(s, -1),
        {"a softmax over the wrong axis (each column sums to 1, not each row)": only(softmax_over_columns)},
    ),
    Exercise(
        "softmax-backward",
        "Softmax, backward (its Jacobian-vector product)",
        "post 000: the softmax's gradient (NNlib's rule; the post links to its derivation)",
        "P = softmax(S; dims=1)",
        "p = softmax(s), per row",
        "∂s, given ∂p, without forming the Jacobian",
        ("p", "dp"),
        ("ds",),
        "p: (H, T, T) = softmax(s), dp: (H, T, T)\nds: (H, T, T)",
        (
            "Differentiate one row: ∂p_i/∂s_j = p_i (δ_ij − p_j).",
            "That Jacobian is diag(p) − p pᵀ, and (diag(p) − p pᵀ) ∂p = p ⊙ ∂p − p (pᵀ ∂p): never build it.",
            "∂s = p ⊙ (∂p − Σ_j ∂p_j p_j), per row: ds = p * (dp - (dp * p).sum(-1, keepdim=True)).",
        ),
        softmax_backward,
        _scores,
        lambda s, p, dp: autograd(lambda s: torch.softmax(s, -1), ("s",), "dp")(s=s, dp=dp),
        {
            "the sum Σ_j ∂p_j p_j taken down each column (over the queries), not along each row": only(
                softmax_jvp_over_queries
            )
        },
    ),
    Exercise(
        "cross-entropy-backward",
        "Cross-entropy with softmax, backward",
        "posts 000 and 004: the loss (Flux's logitcrossentropy; its gradient is left to Flux there)",
        "L = mean(−sum(Y .* logsoftmax(Z; dims=1); dims=1))",
        "L = mean over the N rows of −log softmax(z)[y]",
        "∂z, the gradient of L (a number) with respect to the logits",
        ("z", "y"),
        ("dz",),
        "z: (N, V) logits, y: (N,) the right token (or class) of each row\ndz: (N, V)",
        (
            "−log softmax(z)[y] = −z[y] + log Σ_j exp(z_j): differentiate the two terms apart.",
            "The second term's derivative with respect to z_j is softmax(z)_j; and the loss is a mean over N rows.",
            "∂z = (softmax(z) − onehot(y)) / N: dz = softmax(z); dz[range(N), y] -= 1; dz /= N.",
        ),
        cross_entropy_backward,
        _logits,
        lambda z, y: autograd(lambda z: F.cross_entropy(z, y), ("z",), "d")(z=z, d=torch.tensor(1.0, dtype=z.dtype)),
    ),
    Exercise(
        "layer-norm-forward",
        "Layer norm, forward",
        "post 000: layer norm (the posts divide by σ + ε; PyTorch, and this library, by √(σ² + ε))",
        "a .* (X .- μ) ./ (σ .+ ε) .+ b, per column",
        "y = γ ⊙ (x − μ) / √(σ² + ε) + β, per row",
        "y as we compute it (PyTorch's layer norm), μ and σ² each row's mean and variance",
        ("x", "gamma", "beta", "eps"),
        ("y",),
        "x: (N, C), gamma: (C,), beta: (C,), eps: a number\ny: (N, C)",
        (
            "μ and σ² are each row's mean and variance, over its C channels.",
            "The variance divides by C (the biased one), as LayerNorm does, not by C − 1.",
            "mu = x.mean(-1, keepdim=True); var = ((x - mu) ** 2).mean(-1, keepdim=True); "
            "y = gamma * (x - mu) / torch.sqrt(var + eps) + beta.",
        ),
        layer_norm_forward,
        _norm,
        lambda x, gamma, beta, eps, dy: F.layer_norm(x, x.shape[-1:], gamma, beta, eps),
        {
            "a variance divided by C − 1 (torch.var's default), not by C": only(unbiased_layer_norm),
            "a standard deviation divided by C − 1 (torch.std's default), not by C, and ε added to it": only(
                unbiased_std_layer_norm
            ),
            "the posts' σ + ε where PyTorch has √(σ² + ε)": only(layer_norm_posts),
        },
    ),
    Exercise(
        "layer-norm-backward",
        "Layer norm, backward",
        "post 000's layer norm (its gradient is derived in another of the author's posts)",
        "a .* (X .- μ) ./ (σ .+ ε) .+ b, per column",
        "y = γ ⊙ x̂ + β, x̂ = (x − μ) / √(σ² + ε), per row",
        f"∂x, ∂γ and ∂β, {GIVEN_DY}",
        ("x", "gamma", "beta", "eps", "dy"),
        ("dx", "dgamma", "dbeta"),
        "x: (N, C), gamma, beta: (C,), dy: (N, C)\ndx: (N, C), dgamma, dbeta: (C,)",
        (
            "γ and β are a Dense of one weight per channel: ∂γ and ∂β are sums over the rows. Then ∂x̂ = ∂y ⊙ γ.",
            "μ and σ² depend on every element of the row: their gradients bring two mean terms into ∂x.",
            "∂x = (∂x̂ − mean(∂x̂) − x̂ ⊙ mean(∂x̂ ⊙ x̂)) / √(σ² + ε), the means per row; "
            "dgamma = (dy * xhat).sum(0), dbeta = dy.sum(0).",
        ),
        layer_norm_backward,
        _norm,
        autograd(lambda x, gamma, beta, eps: F.layer_norm(x, x.shape[-1:], gamma, beta, eps), ("x", "gamma", "beta")),
    ),
    Exercise(
        "rms-norm-backward",
        "RMS norm, backward",
        "not in the posts: RMSNorm (--set norm=rms)",
        "—",
        "y = γ ⊙ x r, r = 1 / √(mean(x²) + ε), per row",
        f"∂x and ∂γ, {GIVEN_DY}",
        ("x", "gamma", "eps", "dy"),
        ("dx", "dgamma"),
        "x: (N, C), gamma: (C,), dy: (N, C)\ndx: (N, C), dgamma: (C,)",
        (
            "r depends on the whole row: first find ∂r/∂x_j.",
            "∂r/∂x_j = −r³ x_j / C, so each ∂x_j has a term from its own y_j and one from every y_i through r.",
            "∂x_j = r γ_j ∂y_j − (r³ x_j / C) Σ_i ∂y_i γ_i x_i: "
            "dx = r * dy * gamma - r**3 * x * (dy * gamma * x).mean(-1, keepdim=True); dgamma = (dy * x * r).sum(0).",
        ),
        rms_norm_backward,
        _norm,
        autograd(lambda x, gamma, eps: gamma * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps), ("x", "gamma")),
    ),
)

"""The data behind the inspection plots, as plain tensors (tested without drawing anything).

Shapes: T tokens, S source tokens, V vocabulary, C channels, L positions.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@torch.no_grad()
def generator_attention(model: nn.Module, ids: Tensor, block: int, head: int) -> Tensor:
    """Attention weights ``(T, T)`` of one head of one block over ``ids (T,)``; masked cells are NaN."""
    n_blocks, n_heads = len(model.blocks), model.config.n_heads
    if not 0 <= block < n_blocks or not 0 <= head < n_heads:
        raise ValueError(f"block {block} / head {head} out of range: the model has {n_blocks} blocks, {n_heads} heads")
    model.eval()
    _, scores = model(ids[None], return_scores=True)
    weights = scores[block][0, head].clone()  # (T, T)
    t = weights.shape[0]
    future = ~torch.ones(t, t, dtype=torch.bool).tril()
    weights[future] = float("nan")  # the look-ahead mask: blank in the heatmap
    return weights


@torch.no_grad()
def next_token_probabilities(model: nn.Module, ids: Tensor) -> Tensor:
    """Probabilities ``(V,)`` of the token after ``ids (T,)`` (cropped to the context)."""
    model.eval()
    ids = ids[-model.config.context :]
    return torch.softmax(model(ids[None], last_only=True)[0, -1].float(), dim=-1)


def cosine_similarity_matrix(vectors: Tensor) -> Tensor:
    """``(N, N)`` cosine similarities of the rows of ``vectors (N, C)``."""
    unit = F.normalize(vectors.float(), dim=-1)
    return unit @ unit.T  # (N, C) @ (C, N) -> (N, N)


def pca_2d(vectors: Tensor) -> Tensor:
    """Project rows ``(N, C)`` onto their first two principal components -> ``(N, 2)``."""
    x = vectors.float() - vectors.float().mean(0, keepdim=True)
    _, _, v = torch.linalg.svd(x, full_matrices=False)  # rows of v: principal directions
    return x @ v[:2].T  # (N, C) @ (C, 2) -> (N, 2)


def tsne_2d(vectors: Tensor, seed: int = 0) -> Tensor:
    """t-SNE embedding ``(N, 2)`` (scikit-learn), perplexity adapted to small vocabularies."""
    from sklearn.manifold import TSNE

    n = vectors.shape[0]
    perplexity = float(max(2, min(30, (n - 1) // 3)))
    out = TSNE(n_components=2, perplexity=perplexity, random_state=seed, init="pca").fit_transform(
        vectors.float().numpy())
    return torch.from_numpy(out)


@torch.no_grad()
def cross_attention(model: nn.Module, src: Tensor, tgt: Tensor, block: int, head: int) -> Tensor:
    """Cross-attention weights ``(T, S)`` of a seq2seq model: target tokens (rows) over source tokens."""
    model.eval()
    src_valid = src != model.config.pad_id
    memory = model.encode(src[None], src_valid[None])
    _, scores = model.decode(tgt[None], memory, src_valid[None], return_scores=True)
    if not 0 <= block < len(scores) or not 0 <= head < model.config.n_heads:
        raise ValueError(f"block {block} / head {head} out of range: {len(scores)} blocks, "
                         f"{model.config.n_heads} heads")
    return scores[block][0, head]

"""The data behind the inspection plots, as plain tensors (tested without drawing anything).

Shapes: T tokens, S source tokens, V vocabulary, C channels, L positions, H heads.
Attention weights come back from the model's own forward through a ``Trace`` (``layers.trace``), found by
their role (self-attention's ``weights``, cross-attention's ``cross weights``), in forward order: nothing is
switched on the modules, so several callers may use one model at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..layers import Trace, padding_mask_from_ids
from ..models.ensemble import classifier_members
from ..optional import need

if TYPE_CHECKING:
    from ..models import TransformerGenerator, TransformerSeq2Seq


def _check(block: int, head: int, n_blocks: int, n_heads: int) -> None:
    if not 0 <= block < n_blocks or not 0 <= head < n_heads:
        raise ValueError(f"block {block} / head {head} out of range: the model has {n_blocks} blocks, {n_heads} heads")


@torch.no_grad()
def generator_attention(model: TransformerGenerator, ids: Tensor, block: int, head: int) -> Tensor:
    """Attention weights ``(T, T)`` of one head of one block over ``ids (T,)``; masked cells are NaN."""
    _check(block, head, len(model.blocks), model.config.n_heads)
    model.eval()
    trace = Trace()
    model(ids[None], trace=trace)
    w = trace[trace.find(role="weights")[block]][0, head].clone()  # (T, T)
    if model.config.causal:
        t = w.shape[0]
        w[~torch.ones(t, t, dtype=torch.bool).tril()] = float("nan")  # the look-ahead mask: blank in the heatmap
    return w


@torch.no_grad()
def classifier_attention(model: nn.Module, ids: Tensor, valid: Tensor | None = None, member: int = 0) -> list[Tensor]:
    """Per block, attention weights ``(H, T, T)`` of a classifier over ``ids (T,)`` (of an ensemble: its
    ``member``'s, the first by default, since the members' heads do not correspond to each other)."""
    members = classifier_members(model)
    if not 0 <= member < len(members):
        raise ValueError(f"member={member}: this classifier has {len(members)} member(s), numbered from 0")
    one: Any = members[member]  # a TransformerClassifier
    one.eval()
    trace = Trace()
    one(ids[None], None if valid is None else valid[None], trace=trace)
    return [trace[name][0] for name in trace.find(role="weights")]  # (H, T, T) per block


@torch.no_grad()
def next_token_probabilities(model: TransformerGenerator, ids: Tensor) -> Tensor:
    """Probabilities ``(V,)`` of the token after ``ids (T,)`` (cropped to the context)."""
    model.eval()
    ids = ids[-model.config.max_length :]
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
    TSNE = need("sklearn.manifold", "plots", "t-SNE maps").TSNE

    n = vectors.shape[0]
    perplexity = float(max(2, min(30, (n - 1) // 3)))
    out = TSNE(n_components=2, perplexity=perplexity, random_state=seed, init="pca").fit_transform(
        vectors.float().numpy()
    )
    return torch.from_numpy(out)


@torch.no_grad()
def cross_attention(model: TransformerSeq2Seq, src: Tensor, tgt: Tensor, block: int, head: int) -> Tensor:
    """Cross-attention weights ``(T, S)`` of a seq2seq model: target tokens (rows) over source tokens."""
    _check(block, head, len(model.decoder), model.config.n_heads)
    return all_cross_attention(model, src, tgt)[block, head]


@torch.no_grad()
def all_generator_attention(model: TransformerGenerator, ids: Tensor) -> Tensor:
    """Every block's and head's attention ``(L, H, T, T)`` over ``ids (T,)``, cropped to the context."""
    model.eval()
    ids = ids[-model.config.max_length :]
    trace = Trace()
    model(ids[None], trace=trace)
    return torch.stack([trace[name][0] for name in trace.find(role="weights")])  # (L, H, T, T)


@torch.no_grad()
def all_cross_attention(model: TransformerSeq2Seq, src: Tensor, tgt: Tensor) -> Tensor:
    """Every decoder block's and head's cross-attention ``(L, H, T, S)``: target rows over source tokens."""
    model.eval()
    src_valid = padding_mask_from_ids(src, model.config.pad_id)
    memory = model.encode(src[None], src_valid[None])
    trace = Trace()
    model.decode(tgt[None], memory, src_valid[None], trace=trace)
    return torch.stack([trace[name][0] for name in trace.find(role="cross weights")])  # (L, H, T, S)


def token_embeddings(model: nn.Module) -> Tensor:
    """The input token-embedding table ``(V, C)`` of any model family (a translator's source table; an
    ensemble's first member's)."""
    model = classifier_members(model)[0]
    table = getattr(model, "embedding", None) or getattr(getattr(model, "encoder", None), "embedding", None)
    if table is None:
        raise ValueError(f"{type(model).__name__} has no token embedding table")
    return table.weight.detach()

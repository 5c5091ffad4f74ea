"""The character GPT's pictures (post 004): attention maps, next-character bars, position-embedding
similarity, and 2-D maps (PCA, t-SNE) of the token and output embeddings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..errors import DataError
from ..generation.prompt import read_prompt
from ..runs import LoadedRun
from ..tokenizers import Tokenizer
from . import plots, scores
from .post_figures import write_position_comparison

if TYPE_CHECKING:
    from ..models.generator import TransformerGenerator

KINDS = ("attention", "next-token", "positions", "embeddings")


def write_generator_plots(
    model: TransformerGenerator,
    tokenizer: Tokenizer,
    out: Path,
    kinds: tuple[str, ...] = KINDS,
    *,
    text: str = "",
    prompt: str = "",
    block: int = 0,
    head: int = 0,
    all_tokens: bool = False,
) -> list[Path]:
    """PNG files for each of ``kinds``; ``text`` feeds the attention map, ``prompt`` the next-token bars
    (the 20 most likely, or with ``all_tokens`` the whole vocabulary in its order, as post 004 5.2)."""
    model = model.cpu()
    written = []
    if "attention" in kinds:
        ids = torch.tensor(tokenizer.encode(text)[: model.config.max_length], dtype=torch.long)
        if not len(ids):
            raise DataError("the text for the attention maps is empty; give at least one character")
        weights = scores.generator_attention(model, ids, block, head)
        chars = [tokenizer.shown(i) for i in ids.tolist()]
        written.append(
            plots.heatmap(
                weights,
                chars,
                chars,
                out / f"attention_block{block}_head{head}.png",
                f"attention, block {block}, head {head}",
            )
        )
    if "next-token" in kinds:
        ids = torch.tensor(read_prompt(tokenizer, prompt).ids, dtype=torch.long)  # an empty prompt: an error
        probs = scores.next_token_probabilities(model, ids)
        shown = torch.arange(len(probs)) if all_tokens else torch.topk(probs, min(20, len(probs))).indices
        written.append(
            plots.bars(
                [tokenizer.shown(i) for i in shown.tolist()],
                probs[shown],
                out / ("next_token_all.png" if all_tokens else "next_token.png"),
                f"next {'character' if tokenizer.kind == 'char' else 'token'} after {prompt[-20:]!r}",
            )
        )
    embeddings = model.embeddings()
    if "positions" in kinds and "position" in embeddings:
        sim = scores.cosine_similarity_matrix(embeddings["position"])
        labels = [str(i + 1) for i in range(sim.shape[0])]  # positions 1..n, the first token's 1 as in the posts
        written.append(
            plots.heatmap(
                sim,
                labels,
                labels,
                out / "position_similarity.png",
                "cosine similarity of position embeddings",
                "position (1 = the first token)",
                "position",
                cmap="RdBu_r",
                vmin=-1,
                vmax=1,
            )
        )
    if "embeddings" in kinds:
        chars = [tokenizer.shown(i) for i in range(len(tokenizer))]
        for name in ("token", "head"):
            written.append(
                plots.scatter_labels(
                    scores.pca_2d(embeddings[name]),
                    chars,
                    out / f"{name}_embeddings_pca.png",
                    f"{name} embeddings, PCA",
                )
            )
            written.append(
                plots.scatter_labels(
                    scores.tsne_2d(embeddings[name]),
                    chars,
                    out / f"{name}_embeddings_tsne.png",
                    f"{name} embeddings, t-SNE",
                )
            )
    return written


def write_generator_run_plots(run: LoadedRun, kinds: tuple[str, ...], out: Path, options: dict[str, Any]) -> list[Path]:
    """``tlite inspect KIND RUN`` for a generator run: ``kinds`` among ``KINDS`` (``("all",)``: every one);
    ``options``: ``text``, ``prompt``, ``block``, ``head``, ``all_tokens``."""
    chosen = KINDS if "all" in kinds else kinds
    unknown = sorted(set(chosen) - set(KINDS))
    if unknown:
        raise ValueError(f"a generator draws {', '.join(KINDS)}, not {', '.join(unknown)}")
    names = ("text", "prompt", "block", "head", "all_tokens")
    written = write_generator_plots(run.model, run.tokenizer, out, chosen, **{k: options[k] for k in names})
    if "positions" in chosen and "position" in run.model.embeddings():
        written.append(write_position_comparison(run.model, out))
    return written

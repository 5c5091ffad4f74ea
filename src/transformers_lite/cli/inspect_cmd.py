"""``tlite inspect KIND RUN_DIR``: PNG plots of what a model learned."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from ..inspect import plots, scores
from .common import add_device, load_run

KINDS = ("attention", "next-token", "positions", "embeddings", "all")


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(name, help="plot attention maps, next-token probabilities, embeddings",
                       description="Write PNG plots into the run directory (or --out).",
                       epilog='examples:\n  tlite inspect all RUN --text "ROMEO:\\nBut soft" --prompt "ROMEO:"\n'
                              '  tlite inspect attention RUN --text "To be, or not" --block 2 --head 1\n'
                              '  tlite inspect attention SEQ2SEQ_RUN --src "Ein Hund." --tgt "A dog."',
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=KINDS)
    p.add_argument("run", help="run directory")
    p.add_argument("--text", default="ROMEO:\nBut soft, what light through yonder window breaks?",
                   help="generator: text for the attention map")
    p.add_argument("--prompt", default="ROMEO:\nBut soft, what light", help="generator: prompt for next-token bars")
    p.add_argument("--src", help="seq2seq: source sentence")
    p.add_argument("--tgt", help="seq2seq: target sentence (default: the model's greedy translation)")
    p.add_argument("--block", type=int, default=0)
    p.add_argument("--head", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="folder for the PNGs (default: the run directory)")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args)
    out = args.out or Path(args.run) / "plots"
    if loaded.config.family == "seq2seq":
        from ..generation.translate import inspect_cross_attention

        written = inspect_cross_attention(loaded, args.src, args.tgt, args.block, args.head, out)
    elif loaded.config.family == "generator":
        written = inspect_generator(loaded, args, out)
    else:
        raise ValueError("inspect supports generator and seq2seq runs; classifier plots come with `tlite evaluate`")
    for path in written:
        print(f"wrote {path}")
    return 0


def inspect_generator(loaded, args: argparse.Namespace, out: Path) -> list[Path]:  # noqa: ANN001
    model, tok = loaded.model.cpu(), loaded.tokenizer
    written = []
    kinds = KINDS[:-1] if args.kind == "all" else (args.kind,)
    if "attention" in kinds:
        ids = torch.tensor(tok.encode(args.text[: model.config.context]), dtype=torch.long)
        weights = scores.generator_attention(model, ids, args.block, args.head)
        chars = tok.decode(ids)
        written.append(plots.heatmap(weights, chars, chars, out / f"attention_block{args.block}_head{args.head}.png",
                                     f"attention, block {args.block}, head {args.head}"))
    if "next-token" in kinds:
        probs = scores.next_token_probabilities(model, torch.tensor(tok.encode(args.prompt), dtype=torch.long))
        top = torch.topk(probs, min(20, len(probs)))
        written.append(plots.bars(tok.decode(top.indices), top.values, out / "next_token.png",
                                  f"next character after {args.prompt[-20:]!r}"))
    if "positions" in kinds:
        emb = model.embeddings()
        if "position" in emb:
            sim = scores.cosine_similarity_matrix(emb["position"])
            labels = [str(i) for i in range(sim.shape[0])]
            written.append(plots.heatmap(sim, labels, labels, out / "position_similarity.png",
                                         "cosine similarity of position embeddings", "position", "position",
                                         cmap="RdBu_r", vmin=-1, vmax=1))
    if "embeddings" in kinds:
        emb = model.embeddings()
        chars = tok.vocabulary
        for name in ("token", "head"):
            written.append(plots.scatter_labels(scores.pca_2d(emb[name]), chars, out / f"{name}_embeddings_pca.png",
                                                f"{name} embeddings, PCA"))
            written.append(plots.scatter_labels(scores.tsne_2d(emb[name]), chars, out / f"{name}_embeddings_tsne.png",
                                                f"{name} embeddings, t-SNE"))
    return written

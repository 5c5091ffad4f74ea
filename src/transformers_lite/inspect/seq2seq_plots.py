"""The translator's picture: cross-attention of one block and head, target tokens over source tokens."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..generation.translate import encode_source, greedy_decode
from ..runs import LoadedRun
from ..tokenizers import Tokenizer
from . import plots, scores

if TYPE_CHECKING:
    from ..models.seq2seq import TransformerSeq2Seq


def write_cross_attention(
    model: TransformerSeq2Seq,
    src_tokenizer: Tokenizer,
    tgt_tokenizer: Tokenizer,
    src: str,
    tgt: str | None,
    block: int,
    head: int,
    out: Path,
) -> list[Path]:
    """The heatmap for ``src``, against ``tgt`` or (when ``None``) the model's greedy translation."""
    if not src:
        raise ValueError("give the source sentence with --src")
    model = model.cpu()
    limit = model.config.max_length
    src_ids = torch.tensor(encode_source(src_tokenizer, src, limit))
    if tgt:
        tgt_ids = tgt_tokenizer.encode(tgt, max_length=limit - 1)
    else:
        tgt_ids = greedy_decode(model, src_ids[None], tgt_tokenizer.need("bos"), tgt_tokenizer.need("eos"))[0]
    tgt_in = torch.tensor([tgt_tokenizer.bos_id, *tgt_ids])
    weights = scores.cross_attention(model, src_ids, tgt_in, block, head)  # (T, S)
    rows = [tgt_tokenizer.token(i) for i in tgt_in.tolist()]
    cols = [src_tokenizer.token(i) for i in src_ids.tolist()]
    return [
        plots.heatmap(
            weights,
            rows,
            cols,
            out / f"cross_attention_block{block}_head{head}.png",
            f"cross-attention, block {block}, head {head}",
            xlabel="source",
            ylabel="target (input)",
        )
    ]


def write_translator_plots(run: LoadedRun, kinds: tuple[str, ...], out: Path, options: dict[str, Any]) -> list[Path]:
    """``tlite inspect attention RUN --src ...`` for a translator run (``options``: ``src``, ``tgt``, ``block``,
    ``head``)."""
    if set(kinds) - {"attention", "all"}:
        raise ValueError(f"a translator draws its cross-attention only (kind attention), not {', '.join(kinds)}")
    return write_cross_attention(
        run.model, run.src_tokenizer, run.tokenizer, options["src"], options.get("tgt"), options["block"],
        options["head"], out,
    )  # fmt: skip

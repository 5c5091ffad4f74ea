"""BLEU and chrF with sacrebleu on detokenized text, for a seq2seq run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..data.translation import load_parallel
from ..generation.translate import DecodeSettings, translate_texts
from ..training.runs import LoadedRun


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return {"bleu": sacrebleu.corpus_bleu(hypotheses, [references]).score,
            "chrf": sacrebleu.corpus_chrf(hypotheses, [references]).score}


def evaluate_translation(run: LoadedRun, src: str | Path, ref: str | Path, beam: int = 1) -> dict[str, Any]:
    sources, references = load_parallel(src, ref)
    hypotheses = translate_texts(run.model, run.src_tokenizer, run.tokenizer, sources, DecodeSettings(beam=beam))
    return {"task": "seq2seq", **corpus_scores(hypotheses, references), "n": len(sources), "beam": beam}

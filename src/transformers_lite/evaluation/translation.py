"""BLEU and chrF with sacrebleu on detokenized text, for a seq2seq run.

sacrebleu is a core dependency (the translator's training reports BLEU), imported on first use: it
is the reference implementation the published BLEU figures are comparable with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..data.tables import split_validation
from ..data.translation import load_pairs, load_parallel
from ..errors import ConfigError
from ..generation.translate import DecodeSettings, translate_texts
from ..runs import LoadedRun
from ..tokenizers.unknown import warn_unknown_characters
from .evaluate import recorded_file


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    """Corpus BLEU and chrF (sacrebleu's defaults: 13a tokenization, cased) of ``hypotheses`` against one
    reference each."""
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return {
        "bleu": sacrebleu.corpus_bleu(hypotheses, [references]).score,
        "chrf": sacrebleu.corpus_chrf(hypotheses, [references]).score,
    }


def recorded_validation_pairs(run: LoadedRun) -> tuple[list[str], list[str]]:
    """The run's own validation pairs: its validation files (two line files or a table of pairs), or the
    same seeded split of its training pairs that it held out."""
    data = run.hyperparameters.get("data", {})
    columns = (data.get("src_column"), data.get("tgt_column"))
    if data.get("val_src"):
        tgt = recorded_file(run, "val_tgt", "--ref FILE") if data.get("val_tgt") else None
        pairs = load_pairs(recorded_file(run, "val_src", "--src FILE --ref FILE"), tgt, columns)
        return pairs.src, pairs.tgt
    tgt = recorded_file(run, "train_tgt", "--ref FILE") if data.get("train_tgt") else None
    pairs = load_pairs(recorded_file(run, "train_src", "--src FILE --ref FILE"), tgt, columns)
    _, val = split_validation(len(pairs.src), data.get("val_fraction", 0.05), run.hyperparameters.get("seed", 0))
    kept = [i for i in val if pairs.src[i].strip() and pairs.tgt[i].strip()]  # as training left out empty pairs
    return [pairs.src[i] for i in kept], [pairs.tgt[i] for i in kept]


def evaluate_translation(
    run: LoadedRun, src: str | Path | None = None, ref: str | Path | None = None, beam: int = 1, progress: bool = False
) -> dict[str, Any]:
    """BLEU and chrF on ``src``/``ref`` (default: the run's own validation pairs), beside those of copying
    each source sentence unchanged (between languages that share names, numbers and cognates this scores
    well above zero: a translator that does not beat it has not learned to translate yet)."""
    if (src is None) != (ref is None):
        raise ConfigError("give both --src FILE and --ref FILE, or neither (the run's validation pairs)")
    if src is None or ref is None:
        sources, references = recorded_validation_pairs(run)
    else:
        sources, references = load_parallel(src, ref)
        warn_unknown_characters(str(src), run.src_tokenizer, sources)
    hypotheses = translate_texts(
        run.model, run.src_tokenizer, run.tokenizer, sources, DecodeSettings(beam=beam), progress=progress
    )
    copied = corpus_scores(sources, references)  # no model: the source sentence as its own translation
    return {
        "task": "seq2seq",
        **corpus_scores(hypotheses, references),
        "n": len(sources),
        "beam": beam,
        "copy_source_bleu": copied["bleu"],
        "copy_source_chrf": copied["chrf"],
    }

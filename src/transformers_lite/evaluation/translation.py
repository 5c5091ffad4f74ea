"""Evaluating a seq2seq run: BLEU and chrF (``metrics.corpus_scores``, sacrebleu) on detokenized text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.tables import looks_like_a_table, split_validation
from ..data.translation import Pairs, load_pairs, load_parallel
from ..errors import ConfigError
from ..generation.translate import DecodeSettings, translate_texts
from ..runs import LoadedRun
from ..tokenizers.unknown import warn_unknown_characters
from .evaluate import recorded_file
from .metrics import corpus_scores
from .pair_baselines import score_pair_baseline


def _recorded_training(run: LoadedRun) -> tuple[Pairs, list[int]]:
    """The run's training table of pairs (or line files), and the indices of its validation split (none
    when the run had validation files)."""
    data = run.hyperparameters.get("data", {})
    tgt = recorded_file(run, "train_tgt", "--ref FILE") if data.get("train_tgt") else None
    pairs = load_pairs(recorded_file(run, "train_src", "--src FILE --ref FILE"), tgt, _columns(run))
    if data.get("val_src"):
        return pairs, []
    _, val = split_validation(len(pairs.src), data.get("val_fraction", 0.05), run.hyperparameters.get("seed", 0))
    return pairs, list(val)


def _columns(run: LoadedRun) -> tuple[str | None, str | None]:
    data = run.hyperparameters.get("data", {})
    return data.get("src_column"), data.get("tgt_column")


def _kept(pairs: Pairs, indices: Sequence[int]) -> tuple[list[str], list[str]]:
    kept = [i for i in indices if pairs.src[i].strip() and pairs.tgt[i].strip()]  # as training left out empty pairs
    return [pairs.src[i] for i in kept], [pairs.tgt[i] for i in kept]


def recorded_validation_pairs(run: LoadedRun) -> tuple[list[str], list[str]]:
    """The run's own validation pairs: its validation files (two line files or a table of pairs), or the
    same seeded split of its training pairs that it held out."""
    data = run.hyperparameters.get("data", {})
    if data.get("val_src"):
        tgt = recorded_file(run, "val_tgt", "--ref FILE") if data.get("val_tgt") else None
        pairs = load_pairs(recorded_file(run, "val_src", "--src FILE --ref FILE"), tgt, _columns(run))
        return pairs.src, pairs.tgt
    return _kept(*_recorded_training(run))


def recorded_training_pairs(run: LoadedRun) -> tuple[list[str], list[str]]:
    """The pairs the run trained on: its training pairs less the validation split it held out."""
    pairs, val = _recorded_training(run)
    held = set(val)
    return _kept(pairs, [i for i in range(len(pairs.src)) if i not in held])


def test_pairs(run: LoadedRun, data: str | Path | None, src: str | Path | None, ref: str | Path | None) -> Pairs:
    """The pairs to score: a table of pairs (``data``, read with the run's columns), two line files
    (``src``/``ref``; a table given as one is refused with the command that reads it), or the run's own
    validation pairs."""
    if data is not None:
        if src is not None or ref is not None:
            raise ConfigError("give --data TABLE (pairs in the run's columns) or --src FILE --ref FILE, not both")
        pairs = load_pairs(data, None, _columns(run))
        warn_unknown_characters(str(data), run.src_tokenizer, pairs.src)
        return pairs
    if (src is None) != (ref is None):
        raise ConfigError("give both --src FILE and --ref FILE, or neither (the run's validation pairs)")
    if src is None or ref is None:
        return Pairs(*recorded_validation_pairs(run), ("source", "target"))
    for given in (src, ref):
        if looks_like_a_table(given):
            raise ConfigError(
                f"{given} is a table, not one sentence per line: score a table of pairs with --data {given} "
                "(its source and target columns are read as the run read its own)"
            )
    pairs = Pairs(*load_parallel(src, ref), ("source", "target"))
    warn_unknown_characters(str(src), run.src_tokenizer, pairs.src)
    return pairs


def evaluate_translation(
    run: LoadedRun,
    src: str | Path | None = None,
    ref: str | Path | None = None,
    beam: int = 1,
    progress: bool = False,
    data: str | Path | None = None,
    baselines: Sequence[str] = (),
) -> dict[str, Any]:
    """BLEU and chrF on the pairs ``test_pairs`` reads, beside those of copying each source sentence
    unchanged (between languages that share names, numbers and cognates this scores well above zero: a
    translator that does not beat it has not learned to translate yet) and of the ``baselines`` named
    (``pair_baselines``), given the run's own training pairs."""
    pairs = test_pairs(run, data, src, ref)
    sources, references = pairs.src, pairs.tgt
    hypotheses = translate_texts(
        run.model, run.src_tokenizer, run.tokenizer, sources, DecodeSettings(beam=beam), progress=progress
    )
    copied = corpus_scores(sources, references)  # no model: the source sentence as its own translation
    result = {
        "task": "seq2seq",
        **corpus_scores(hypotheses, references),
        "n": len(sources),
        "beam": beam,
        "copy_source_bleu": copied["bleu"],
        "copy_source_chrf": copied["chrf"],
    }
    if baselines:
        train = recorded_training_pairs(run)
        result["baselines"] = [score_pair_baseline(name, train, (sources, references)) for name in baselines]
    return result

"""Evaluate a trained run on a file (or its own validation data): one function per model family.

Each returns the JSON-ready dict that ``tlite evaluate --json`` prints.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..atomic import read_json
from ..data.corpus import is_corpus_spec, read_corpus
from ..data.reviews import Reviews, encode_labels, load_reviews
from ..data.shakespeare import split_text
from ..data.sources import read_text_file, sha256
from ..data.tables import split_validation
from ..errors import DataError
from ..runs import LoadedRun
from ..tokenizers.unknown import warn_unknown_characters
from .metrics import (
    accuracy,
    bits_per_unit,
    confusion_matrix,
    language_model_loss,
    macro_f1,
    ordinal_errors,
    per_class_scores,
    perplexity,
    text_units,
    unigram_loss,
)
from .prediction import class_names, classify_texts, is_ordinal
from .text_baselines import score_text_baseline


def recorded_file(run: LoadedRun, key: str, option: str) -> Path:
    """A data file (or ``datasets`` folder) the run recorded (``hyperparameters.json``), checked against its
    recorded sha256."""
    data = run.hyperparameters.get("data", {})
    if not data.get(key):
        raise DataError(f"{run.run_dir} recorded no {key.replace('_', ' ')} file; pass {option}")
    path = Path(data[key])
    if not path.exists():  # a file, or a datasets folder
        raise FileNotFoundError(f"the run's {key.replace('_', ' ')} file {path} is gone; pass {option}")
    if data.get(f"{key}_sha256") not in (None, sha256(path)):
        raise DataError(
            f"{path} changed since {run.run_dir} was trained (sha256 differs), so it is not the data the "
            f"run recorded; pass {option} to evaluate on a file of your choice"
        )
    return path


def recorded_text(run: LoadedRun) -> str:
    """A generator's training text as recorded: its file, folder or pattern, checked against its sha256."""
    data = run.hyperparameters.get("data", {})
    if not data.get("text") or not is_corpus_spec(data["text"]):
        return read_text_file(recorded_file(run, "text", "--text FILE"))
    text = read_corpus(data["text"], data.get("exclude")).text
    if data.get("text_sha256") not in (None, hashlib.sha256(text.encode("utf-8")).hexdigest()):
        raise DataError(
            f"the files of {data['text']} changed since {run.run_dir} was trained (sha256 differs); pass --text "
            "FILE to evaluate on a text of your choice"
        )
    return text


def evaluate_generator(
    run: LoadedRun, text: str | Path | None = None, exclude: str | None = None, baselines: Sequence[str] = ()
) -> dict[str, Any]:
    """Mean next-token cross-entropy over ``text`` (a file, folder or pattern, less the files ``exclude``
    matches; or the run's validation split), its perplexity and its bits per character and per byte of the
    text the scored tokens decode to, beside two models that read no context (uniform over the vocabulary,
    and each token's frequency in the text) and the ``baselines`` named (``text_baselines``), given the
    text the run trained on."""
    fraction = run.hyperparameters.get("data", {}).get("val_fraction", 0.1)
    trained: Tensor | None = None
    if text is None:
        trained, ids = split_text(torch.tensor(run.tokenizer.encode(recorded_text(run)), dtype=torch.long), fraction)
    else:
        given = read_corpus(text, exclude).text
        warn_unknown_characters(str(text), run.tokenizer, [given])
        ids = torch.tensor(run.tokenizer.encode(given), dtype=torch.long)
    loss, n = language_model_loss(run.model, ids, run.config.max_length)
    vocab = run.config.vocab_size
    scored = run.tokenizer.decode(ids[1 : n + 1].tolist())  # the text of the predicted tokens
    chars, nbytes = text_units(scored)
    unigram = unigram_loss(ids[1 : n + 1])
    # the baselines a reader calibrates against (post 004): guessing uniformly over the vocabulary
    # costs ln V nats per token, perplexity V; knowing each token's frequency in this text, its entropy
    result = {
        "task": "generator",
        "loss": loss,
        "perplexity": perplexity(loss),
        "bits_per_char": bits_per_unit(loss, n, chars),
        "bits_per_byte": bits_per_unit(loss, n, nbytes),
        "n_tokens": n,
        "n_chars": chars,
        "n_bytes": nbytes,
        "uniform_loss": float(np.log(vocab)),
        "uniform_perplexity": float(vocab),
        "uniform_bits_per_char": bits_per_unit(float(np.log(vocab)), n, chars),
        "unigram_loss": unigram,
        "unigram_perplexity": perplexity(unigram),
        "unigram_bits_per_char": bits_per_unit(unigram, n, chars),
    }
    if baselines:  # given the text the run trained on, scored on the same characters as the model
        if trained is None:
            trained, _ = split_text(torch.tensor(run.tokenizer.encode(recorded_text(run)), dtype=torch.long), fraction)
        train = run.tokenizer.decode(trained.tolist())
        result["baselines"] = [score_text_baseline(name, train, scored) for name in baselines]
    return result


def _labelled(run: LoadedRun, path: Path | str) -> tuple[Reviews, np.ndarray, np.ndarray]:
    """A table read the way the run read its own: its columns (when the table has them) and its classes."""
    data = run.hyperparameters.get("data", {})
    reviews = load_reviews(path, usual=(data.get("text_column"), data.get("label_column")))
    labels, kept = encode_labels(reviews, run.config.n_labels, run.config.label_names, data.get("label_map"))
    return reviews, labels, kept


def recorded_validation_reviews(run: LoadedRun) -> tuple[list[str], np.ndarray]:
    """The run's own validation records: its ``--val`` file, or the same random split of ``--train``."""
    data = run.hyperparameters.get("data", {})
    if data.get("val"):
        reviews, labels, kept = _labelled(run, recorded_file(run, "val", "--data FILE"))
        return [reviews.texts[i] for i in kept], labels
    reviews, labels, kept = _labelled(run, recorded_file(run, "train", "--data FILE"))
    stratified = labels if data.get("stratify") else None  # earlier runs (no "stratify") split at random
    _, val = split_validation(len(kept), data.get("val_fraction", 0.1), run.hyperparameters.get("seed", 0), stratified)
    return [reviews.texts[kept[i]] for i in val], labels[val]


def chance_scores(labels: np.ndarray, k: int, ordinal: bool = False) -> dict[str, float]:
    """What needs no model: a uniform guess (accuracy 1/K) and always the most common label (its share
    of the data; macro-F1 = its F1 / K, the other labels scoring 0); for ordered classes, the mean
    absolute error of always guessing the median class."""
    counts = np.bincount(labels, minlength=k)
    share = float(counts.max() / max(len(labels), 1))
    scores = {
        "chance_accuracy": 1.0 / k,
        "majority_accuracy": share,
        "majority_macro_f1": (2 * share / (1 + share)) / k,
    }
    if ordinal and len(labels):
        median = int(np.median(labels))
        scores["median_mae"] = ordinal_errors(labels, np.full_like(labels, median))["mae"]
    return scores


def kept_weights(run: LoadedRun) -> dict[str, Any] | None:
    """The run's ``kept.json`` (which step's weights it saved: the best evaluation's or the last step's),
    or ``None`` for a run that has none (trained before it was written, or imported)."""
    path = run.run_dir / "kept.json"
    if not path.is_file():
        return None
    kept = read_json(path, "record of the kept weights")
    return kept if isinstance(kept, dict) else None


def kept_line(kept: dict[str, Any]) -> str:
    """One line on ``kept_weights``: "the weights of step 1200, the best val_macro_f1 (0.6100) of 8
    evaluations; the last step's (3000) was 0.5800"."""
    metric, best, last = kept.get("metric"), kept.get("best_value"), kept.get("last_value")
    if metric is None or best is None:
        return f"the weights of step {kept.get('step')} (the last)"
    evaluations = f" of {kept['evaluations']} evaluations" if kept.get("evaluations") else ""
    if kept.get("best_step") == kept.get("last_step"):
        return f"the weights of step {kept.get('step')}, the last, also the best {metric} ({best:.4f}){evaluations}"
    if kept.get("weights") == "best":
        was = "" if last is None else f"; the last step's ({kept.get('last_step')}) was {last:.4f}"
        return f"the weights of step {kept.get('step')}, the best {metric} ({best:.4f}){evaluations}{was}"
    return (
        f"the weights of step {kept.get('step')}, the last (--no-keep-best); step {kept.get('best_step')}'s "
        f"{metric} was the best ({best:.4f})"
    )


def evaluate_classifier(run: LoadedRun, data: str | Path | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Metrics on a table of labelled texts (default: the run's own validation records), plus the plots'
    arrays. Ordered classes (the 5 stars, or a run trained with ``ordinal``) add mean absolute error
    and off-by-one accuracy."""
    if data is None and run.hyperparameters.get("data", {}).get("val"):
        data = recorded_file(run, "val", "--data FILE")  # the run's own --val file
    if data is None:
        texts, labels = recorded_validation_reviews(run)
        reviews = None
    else:
        reviews, labels, kept = _labelled(run, data)
        texts = [reviews.texts[i] for i in kept]
        warn_unknown_characters(str(data), run.tokenizer, texts)
    probs = classify_texts(run.model, run.tokenizer, texts)
    preds = probs.argmax(1)
    k = probs.shape[1]
    matrix = confusion_matrix(labels, preds, k)
    ordinal = is_ordinal(
        run.config.label_names, run.config.n_labels, run.hyperparameters.get("data", {}).get("ordinal")
    )
    result = {
        "task": "classifier",
        "labels": run.config.n_labels,
        "classes": class_names(run.config),
        "n": int(len(labels)),
        "accuracy": accuracy(labels, preds),
        "macro_f1": macro_f1(matrix),
        **(ordinal_errors(labels, preds) if ordinal else {}),
        "per_class": per_class_scores(matrix, class_names(run.config)),
        "confusion_matrix": matrix.tolist(),
        **chance_scores(labels, k, ordinal),
        **({"weights": weights} if (weights := kept_weights(run)) else {}),
    }
    arrays = {"labels": labels, "probs": probs, "matrix": matrix, "texts": texts}
    if k == 2 and reviews is not None and reviews.is_stars and not run.config.label_names:
        neutral = [t for t, s in zip(reviews.texts, reviews.stars) if s == 3]
        neutral_probs = classify_texts(run.model, run.tokenizer, neutral) if neutral else probs[:0]
        if neutral:
            arrays["neutral_probs"] = neutral_probs
        # post 000's figure: the binary model's probabilities for each true star, 3 stars included
        arrays["stars"] = np.array([reviews.stars[i] for i in kept] + [3] * len(neutral))
        arrays["star_probs"] = np.concatenate([probs, neutral_probs])
    return result, arrays

"""Evaluate a trained run on a file (or its own validation data): one function per model family.

Each returns the JSON-ready dict that ``tlite evaluate --json`` prints.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..data.corpus import is_corpus_spec, read_corpus
from ..data.reviews import Reviews, encode_labels, load_reviews
from ..data.shakespeare import split_text
from ..data.sources import read_text_file, sha256
from ..data.tables import split_validation
from ..errors import DataError
from ..runs import LoadedRun
from .metrics import accuracy, confusion_matrix, language_model_loss, macro_f1, ordinal_errors, perplexity
from .prediction import class_names, classify_texts, is_ordinal


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
    text = read_corpus(data["text"]).text
    if data.get("text_sha256") not in (None, hashlib.sha256(text.encode("utf-8")).hexdigest()):
        raise DataError(
            f"the files of {data['text']} changed since {run.run_dir} was trained (sha256 differs); pass --text "
            "FILE to evaluate on a text of your choice"
        )
    return text


def evaluate_generator(run: LoadedRun, text: str | Path | None = None) -> dict[str, Any]:
    """Mean next-token cross-entropy over ``text`` (a file, folder or pattern; or the run's validation split)."""
    if text is None:
        ids = torch.tensor(run.tokenizer.encode(recorded_text(run)), dtype=torch.long)
        _, ids = split_text(ids, run.hyperparameters["data"].get("val_fraction", 0.1))
    else:
        ids = torch.tensor(run.tokenizer.encode(read_corpus(text).text), dtype=torch.long)
    loss, n = language_model_loss(run.model, ids, run.config.max_length)
    vocab = run.config.vocab_size
    # the baseline a reader calibrates against (post 004): guessing uniformly over the vocabulary
    # costs ln V nats per character, perplexity V
    return {
        "task": "generator",
        "loss": loss,
        "perplexity": perplexity(loss),
        "n_tokens": n,
        "uniform_loss": float(np.log(vocab)),
        "uniform_perplexity": float(vocab),
    }


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
    _, val = split_validation(len(kept), data.get("val_fraction", 0.1), run.hyperparameters.get("seed", 0))
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


def evaluate_classifier(run: LoadedRun, data: str | Path | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
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
        "confusion_matrix": matrix.tolist(),
        **chance_scores(labels, k, ordinal),
    }
    arrays = {"labels": labels, "probs": probs, "matrix": matrix}
    if k == 2 and reviews is not None and reviews.is_stars and not run.config.label_names:
        neutral = [t for t, s in zip(reviews.texts, reviews.stars) if s == 3]
        neutral_probs = classify_texts(run.model, run.tokenizer, neutral) if neutral else probs[:0]
        if neutral:
            arrays["neutral_probs"] = neutral_probs
        # post 000's figure: the binary model's probabilities for each true star, 3 stars included
        arrays["stars"] = np.array([reviews.stars[i] for i in kept] + [3] * len(neutral))
        arrays["star_probs"] = np.concatenate([probs, neutral_probs])
    return result, arrays

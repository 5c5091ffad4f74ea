"""Evaluate a trained run on a file (or its own validation data): one function per model family.

Each returns the JSON-ready dict that ``tlite evaluate --json`` prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..data.reviews import load_reviews, task_labels
from ..data.shakespeare import split_text
from ..data.sources import read_text_file, sha256
from ..errors import DataError
from ..training.runs import LoadedRun
from .metrics import accuracy, confusion_matrix, language_model_loss, macro_f1, perplexity
from .prediction import classify_texts


def evaluate_generator(run: LoadedRun, text: str | Path | None = None) -> dict[str, Any]:
    """Mean next-character cross-entropy over ``text`` (or the run's validation split)."""
    if text is None:
        data = run.hyperparameters.get("data", {})
        path = Path(data.get("text", ""))
        if not path.is_file():
            raise FileNotFoundError(f"the run's training text {path} is gone; pass --text FILE")
        if data.get("text_sha256") not in (None, sha256(path)):
            raise DataError(f"{path} changed since {run.run_dir} was trained (sha256 differs), so its validation split "
                            "is not the one the run recorded; pass --text FILE to score a text of your choice")
        ids = torch.tensor(run.tokenizer.encode(read_text_file(path)), dtype=torch.long)
        _, ids = split_text(ids, data.get("val_fraction", 0.1))
    else:
        ids = torch.tensor(run.tokenizer.encode(read_text_file(text)), dtype=torch.long)
    loss, n = language_model_loss(run.model, ids, run.config.max_length)
    return {"task": "generator", "loss": loss, "perplexity": perplexity(loss), "n_tokens": n}


def evaluate_classifier(run: LoadedRun, data: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Metrics on a review file, plus the arrays the plots need."""
    reviews = load_reviews(data)
    labels, kept = task_labels(reviews.stars, run.config.n_labels)
    probs = classify_texts(run.model, run.tokenizer, [reviews.texts[i] for i in kept])
    preds = probs.argmax(1)
    k = probs.shape[1]
    matrix = confusion_matrix(labels, preds, k)
    result = {"task": "classifier", "labels": run.config.n_labels, "n": int(len(labels)),
              "accuracy": accuracy(labels, preds), "macro_f1": macro_f1(matrix), "confusion_matrix": matrix.tolist()}
    arrays = {"labels": labels, "probs": probs, "matrix": matrix}
    if k == 2:
        neutral = [t for t, s in zip(reviews.texts, reviews.stars) if s == 3]
        if neutral:
            arrays["neutral_probs"] = classify_texts(run.model, run.tokenizer, neutral)
    return result, arrays

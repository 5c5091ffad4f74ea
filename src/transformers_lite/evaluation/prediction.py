"""What a classifier predicts: logits in batches, probabilities, class indices and class names.

Shapes: N texts, T tokens, K classes (K = 1 for post 000's single-logit binary model).
One module for every caller: the training task's evaluation, ``tlite evaluate``/``classify``,
the plots and the Python API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..config import ClassifierConfig
from ..data.reviews import SENTIMENT_NAMES, STAR_NAMES
from ..errors import DataError, warn
from ..progress import progress_bar
from ..tokenizers import Tokenizer


def class_names(config: ClassifierConfig | Any) -> list[str]:  # noqa: ANN401
    """The classes of a run (its ``ClassifierConfig``, or its training task: anything with ``label_names``
    and ``n_labels``): those taken from its data, else ``["1 star", ..., "5 stars"]`` for the 5-class
    star task and ``["negative", "positive"]`` for sentiment."""
    if config.label_names:
        return list(config.label_names)
    return list(STAR_NAMES if config.n_labels == 5 else SENTIMENT_NAMES)


def is_ordinal(label_names: tuple[str, ...], n_labels: int, ordinal: bool | None = None) -> bool:
    """Whether the classes are ordered, so that mean absolute error and off-by-one accuracy mean
    something: as the run's ``ordinal`` setting says (more than two classes), by default only for the
    5-class star task."""
    if ordinal is None:
        return not label_names and n_labels == 5
    return bool(ordinal) and n_labels > 2


def predictions(logits: Tensor) -> Tensor:
    """Class index per row ``(N,)``: the argmax, or ``logit > 0`` for a single logit."""
    return (logits[:, 0] > 0).long() if logits.shape[1] == 1 else logits.argmax(-1)


def probabilities(logits: Tensor) -> Tensor:
    """Class probabilities ``(N, K)``; a single logit becomes ``[1 - p, p]``."""
    if logits.shape[1] == 1:
        p = torch.sigmoid(logits[:, 0].float())
        return torch.stack([1 - p, p], dim=-1)
    return torch.softmax(logits.float(), dim=-1)


@torch.no_grad()
def predict_logits(model: Any, ids: Tensor, valid: Tensor, batch_size: int = 256, progress: bool = False) -> Tensor:
    """Logits ``(N, K)`` of ``ids (N, T)`` with mask ``valid (N, T)``, ``batch_size`` rows at a time."""
    device = next(model.parameters()).device
    starts = range(0, len(ids), batch_size)
    if progress:
        starts = progress_bar(starts, desc="classifying", unit="batch", leave=False)
    out = [
        model(ids[i : i + batch_size].to(device), valid[i : i + batch_size].to(device)).float().cpu() for i in starts
    ]
    return torch.cat(out) if out else torch.zeros(0, model.config.n_labels)


def encode_for_classifier(
    tokenizer: Tokenizer, texts: list[str], max_length: int, pad_to_length: bool
) -> tuple[Tensor, Tensor]:
    """Ids and mask for the classifier: at most ``max_length`` words, padded to exactly ``max_length``
    for the flatten head (it learns one weight per position), at least one column otherwise.

    A tokenizer without a pad token pads with the unknown word, as the posts do: the mask is then all
    True and the model reads the padding like any other word."""
    if tokenizer.pad_id is None:
        rows = [tokenizer.encode(t, max_length=max_length) for t in texts]
        width = max_length if pad_to_length else max([1, *map(len, rows)])
        ids = torch.full((len(texts), width), tokenizer.need("unk"), dtype=torch.long)  # (N, T)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return ids, torch.ones_like(ids, dtype=torch.bool)
    ids, valid = tokenizer.encode_batch(texts, max_length, pad_to=max_length if pad_to_length else None)
    if ids.shape[1] == 0:
        ids, valid = ids.new_full((len(texts), 1), tokenizer.pad_id), valid.new_zeros((len(texts), 1))
    return ids, valid


def check_texts(texts: list[str], tokenizer: Tokenizer, max_length: int, names: Sequence[str] | None = None) -> None:
    """Inputs given by a user: an empty text (nothing the tokenizer keeps) is an error; a text longer
    than the model reads is accepted with a warning saying how much of it counts. Each text is named by
    ``names`` (a record's id: ``ticket_id T-1042``), else by its place (``text 3``)."""
    called = list(names) if names is not None else [f"text {i}" for i in range(1, len(texts) + 1)]
    for i, text in enumerate(texts):
        if not text.strip():
            raise DataError(f"{called[i]} is empty; give the text to classify")
    lengths = [len(tokenizer.encode(t)) for t in texts]
    empty = [i for i, n in enumerate(lengths) if n == 0]
    if empty:
        warn(
            f"{called[empty[0]]} has no word of the vocabulary (only punctuation or single letters): the prediction "
            "is the model's answer to an empty text"
        )
    long = [i for i, n in enumerate(lengths) if n > max_length]
    if long:
        warn(
            f"{len(long)} text(s) (first: {called[long[0]]}, {lengths[long[0]]} words) are longer than the "
            f"{max_length} words the model reads; only their first {max_length} words count"
        )


def classify_texts(model: Any, tokenizer: Tokenizer, texts: list[str], progress: bool = False) -> np.ndarray:
    """Class probabilities ``(N, K)`` for raw texts (K = 2 for a one-logit binary model)."""
    cfg = model.config
    ids, valid = encode_for_classifier(tokenizer, texts, cfg.max_length, cfg.pads_to_length)
    return probabilities(predict_logits(model, ids, valid, progress=progress)).numpy()

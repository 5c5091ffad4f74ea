"""Classification and language-model metrics, checked against hand computations in the tests.

Confusion matrix rows are the true labels and columns the predictions (K x K).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn


def confusion_matrix(y_true, y_pred, n_labels: int) -> np.ndarray:  # noqa: ANN001
    """``m[i, j]`` = how many samples of true label ``i`` were predicted as ``j``."""
    t, p = np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)
    if t.shape != p.shape:
        raise ValueError(f"y_true and y_pred differ in length: {t.shape} vs {p.shape}")
    return np.bincount(t * n_labels + p, minlength=n_labels * n_labels).reshape(n_labels, n_labels)


def accuracy(y_true, y_pred) -> float:  # noqa: ANN001
    t, p = np.asarray(y_true), np.asarray(y_pred)
    return float((t == p).mean()) if len(t) else float("nan")


def ordinal_errors(y_true, y_pred) -> dict[str, float]:  # noqa: ANN001
    """For ordered classes (stars): the mean absolute error in classes, and the share of predictions at
    most one class away (off-by-one accuracy). Always guessing the middle of five balanced stars gives
    MAE 1.2 and off-by-one accuracy 0.6."""
    t, p = np.asarray(y_true, dtype=np.int64), np.asarray(y_pred, dtype=np.int64)
    if not len(t):
        return {"mae": float("nan"), "off_by_one": float("nan")}
    gap = np.abs(t - p)
    return {"mae": float(gap.mean()), "off_by_one": float((gap <= 1).mean())}


def per_class_f1(matrix: np.ndarray) -> np.ndarray:
    tp = np.diag(matrix).astype(float)
    predicted, actual = matrix.sum(0), matrix.sum(1)
    denom = predicted + actual
    return np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)


def per_class_scores(matrix: np.ndarray, names: list[str] | tuple[str, ...]) -> list[dict[str, float | int | str]]:
    """Precision, recall, F1 and support (true records) of each class from a confusion matrix, then their
    unweighted ("macro avg") and support-weighted ("weighted avg") means, as scikit-learn's
    ``classification_report`` gives them (a class never predicted, or never present, scores 0 there)."""
    m = np.asarray(matrix, dtype=float)
    tp, predicted, actual = np.diag(m), m.sum(0), m.sum(1)
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    recall = np.divide(tp, actual, out=np.zeros_like(tp), where=actual > 0)
    f1 = per_class_f1(matrix)
    rows: list[dict[str, float | int | str]] = [
        {"class": str(n), "precision": float(p), "recall": float(r), "f1": float(f), "support": int(s)}
        for n, p, r, f, s in zip(names, precision, recall, f1, actual)
    ]
    total = max(float(actual.sum()), 1.0)
    for name, weights in (("macro avg", np.ones_like(actual) / len(actual)), ("weighted avg", actual / total)):
        rows.append(
            {
                "class": name,
                **{
                    k: float((v * weights).sum()) for k, v in (("precision", precision), ("recall", recall), ("f1", f1))
                },
                "support": int(actual.sum()),
            }
        )
    return rows


def per_class_table(rows: list[dict[str, float | int | str]]) -> str:
    """``per_class_scores`` as the text table ``tlite evaluate`` prints."""
    width = max([len("class"), *(len(str(r["class"])) for r in rows)])
    lines = [f"{'class':<{width}}  precision  recall      f1  support"]
    for i, r in enumerate(rows):
        if r["class"] == "macro avg" and i:
            lines.append("")
        lines.append(
            f"{r['class']!s:<{width}}  {r['precision']:9.4f}  {r['recall']:6.4f}  {r['f1']:6.4f}  {r['support']:7,}"
        )
    return "\n".join(lines)


def macro_f1(matrix: np.ndarray) -> float:
    """Unweighted mean of the per-class F1 scores (classes with no samples and no predictions score 0)."""
    return float(per_class_f1(matrix).mean())


LARGEST_LOG = math.log(sys.float_info.max)  # about 709.78: e^loss beyond it is no float


def perplexity(mean_cross_entropy: float) -> float:
    """``e^loss``; ``inf`` where that is beyond the largest float (a loss over ~709.78 nats, as of a model
    whose outputs are huge), which the printers say in words (``numbers``). NaN stays NaN."""
    if mean_cross_entropy > LARGEST_LOG:
        return math.inf
    return math.exp(mean_cross_entropy)


def bits_per_unit(loss: float, n_tokens: int, units: int) -> float:
    """A mean next-token loss in nats over ``n_tokens`` tokens, per character (or byte) of the text those
    tokens decode to, in bits: total nats / ln 2 / ``units``. Unlike the loss per token it does not
    depend on the tokenizer, so a BPE model compares with a character model (for characters, one per
    token, it is loss / ln 2). NaN for no text."""
    return loss * n_tokens / math.log(2) / units if units else float("nan")


def text_units(text: str) -> tuple[int, int]:
    """``(characters, UTF-8 bytes)`` of ``text``: what bits per character and per byte divide by."""
    return len(text), len(text.encode("utf-8"))


def unigram_loss(ids: Tensor) -> float:
    """The entropy in nats of the tokens' own frequencies in ``ids`` (a 1-D tensor): the mean loss of a
    model that knows how often each token occurs in this very text but reads no context, the least any
    such model can score on it."""
    counts = torch.bincount(ids.flatten()).double()
    p = counts[counts > 0] / counts.sum()
    return float(-(p * p.log()).sum())


@torch.no_grad()
def language_model_loss(
    model: nn.Module, ids: Tensor, context: int, batch_size: int = 64, max_tokens: int | None = None
) -> tuple[float, int]:
    """Mean next-token cross-entropy over ``ids`` in non-overlapping windows of ``context`` tokens.

    Window ``k`` predicts ``ids[k·T + 1 : (k+1)·T + 1]`` from ``ids[k·T : (k+1)·T]``; the last partial
    window is included. Returns ``(mean loss, number of predicted tokens)``.
    """
    if ids.dim() != 1 or len(ids) < 2:
        raise ValueError(f"need a 1-D sequence of at least 2 ids, got shape {tuple(ids.shape)}")
    n = len(ids) - 1 if max_tokens is None else min(len(ids) - 1, max_tokens)
    device = next(model.parameters()).device
    total, count = 0.0, 0
    full = n // context
    starts = torch.arange(full) * context
    offsets = torch.arange(context)
    for i in range(0, full, batch_size):
        idx = starts[i : i + batch_size, None] + offsets[None, :]  # (B, T)
        x, y = ids[idx].to(device), ids[idx + 1].to(device)
        logits = model(x)  # (B, T, V)
        total += F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), reduction="sum").item()
        count += y.numel()
    rest = n - full * context
    if rest:
        x = ids[full * context : full * context + rest][None].to(device)
        y = ids[full * context + 1 : full * context + rest + 1][None].to(device)
        total += F.cross_entropy(model(x).flatten(0, 1).float(), y.flatten(), reduction="sum").item()
        count += rest
    return total / count, count


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    """Corpus BLEU and chrF (sacrebleu's defaults: 13a tokenization, cased) of ``hypotheses`` against one
    reference each. sacrebleu is a core dependency (the translator's training reports BLEU), imported on
    first use: the reference implementation the published BLEU figures are comparable with."""
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return {
        "bleu": sacrebleu.corpus_bleu(hypotheses, [references]).score,
        "chrf": sacrebleu.corpus_chrf(hypotheses, [references]).score,
    }

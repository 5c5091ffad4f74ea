"""Scores of a pretrained encoder (``tlite train mlm``): loss, accuracy and perplexity of the predicted
words, on the run's own validation documents or on a file of documents.

Shapes: B batch, T tokens, N predicted positions, V vocabulary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..data.documents import read_documents
from ..data.masking import IGNORE, Masking
from ..data.tables import split_validation
from ..errors import DataError
from ..runs import LoadedRun
from ..tokenizers.unknown import warn_unknown_characters
from .evaluate import recorded_file
from .metrics import perplexity


@torch.no_grad()
def score(
    model: Any,
    batches: list[tuple[Tensor, Tensor, Tensor]],
    prefix: str,
    objective: str,  # a TransformerEncoderLM
) -> dict[str, float]:
    """Loss, accuracy and perplexity of ``model`` over the target positions of ``batches``."""
    device = next(model.parameters()).device
    total = correct = count = 0.0
    for inputs, valid, targets in batches:
        inputs, valid, targets = inputs.to(device), valid.to(device), targets.to(device)
        keep = targets != IGNORE  # (B, T)
        logits = model.predict(model.encode(inputs, valid)[keep]).float()  # (N, V)
        total += float(F.cross_entropy(logits, targets[keep], reduction="sum"))
        correct += float((logits.argmax(-1) == targets[keep]).sum())
        count += int(keep.sum())
    loss = total / max(count, 1)
    what = "masked" if objective == "masked" else "next"
    return {
        f"{prefix}loss": loss,
        f"{prefix}{what}_accuracy": correct / max(count, 1),
        f"{prefix}perplexity": perplexity(loss),
    }


def evaluate_pretraining(run: LoadedRun, text: str | Path | None = None) -> dict[str, Any]:
    """Masked-word (or next-word) scores of a pretraining run: on the documents of ``text``, or on the
    run's own validation documents (its recorded files, checked, split as in training); masks are
    drawn as for validation during training."""
    config, data = run.config, run.hyperparameters.get("data", {})
    masking = Masking.of(run.tokenizer, config.objective, data.get("mask_prob", 0.15))
    if text is not None:
        docs = read_documents(text)
        warn_unknown_characters(str(text), run.tokenizer, docs)
    else:
        paths = [recorded_file(run, k, "--text FILE") for k in ("reviews", "text") if data.get(k)]
        if not paths:
            raise DataError(f"{run.run_dir} recorded no documents; pass --text FILE")
        docs = [d for path in paths for d in read_documents(path)]
        _, val = split_validation(len(docs), data.get("val_fraction", 0.05), run.hyperparameters.get("seed", 0))
        docs = [docs[i] for i in val]
    seqs = masking.sequences(run.tokenizer, docs, config.max_length)
    if not seqs:
        raise DataError("the documents hold no word the tokenizer reads")
    scores = score(run.model, masking.fixed_batches(seqs), "", config.objective)
    return {"task": "mlm", **scores, "n_sequences": len(seqs)}

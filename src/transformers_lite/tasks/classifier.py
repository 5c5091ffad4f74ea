"""Review classifier task (seed 000): 5 stars or binary sentiment from the review text.

Pipeline: simplify -> words -> at most ``max_length`` tokens -> ids (padded with the pad id).
The vocabulary comes from a file (the seeds' 6,653 words) or from the training reviews with a
minimum document frequency. ``n_labels`` 5 = stars, 2 = negative/positive with 3 stars dropped,
1 = the seed's single logit with binary cross-entropy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..config import ClassifierConfig
from ..data.cooccurrence import ppmi_vectors
from ..data.reviews import encode_reviews, load_reviews, split_validation, task_labels
from ..data.sources import sha256
from ..evaluation.metrics import accuracy, confusion_matrix, macro_f1
from ..tokenizers.index import IndexTokenizer
from ..tokenizers.text import load_vocabulary, select_vocabulary


PPMI_MAX_TOKENS = 2048  # longer reviews are cut here when counting co-occurrences


def labels_to_predictions(logits: Tensor) -> Tensor:
    return (logits[:, 0] > 0).long() if logits.shape[1] == 1 else logits.argmax(-1)


def probabilities(logits: Tensor) -> Tensor:
    """Class probabilities ``(B, K)``; a single logit becomes ``[1 - p, p]``."""
    if logits.shape[1] == 1:
        p = torch.sigmoid(logits[:, 0].float())
        return torch.stack([1 - p, p], dim=-1)
    return torch.softmax(logits.float(), dim=-1)


@torch.no_grad()
def predict_logits(model: nn.Module, ids: Tensor, valid: Tensor, batch_size: int = 256) -> Tensor:
    device = next(model.parameters()).device
    out = [model(ids[i : i + batch_size].to(device), valid[i : i + batch_size].to(device)).float().cpu()
           for i in range(0, len(ids), batch_size)]
    return torch.cat(out) if out else torch.zeros(0, 1)


class ClassifierTask:
    name = "classifier"

    def __init__(self, train: str | Path, *, val: str | Path | None = None, n_labels: int = 5,
                 vocab: str | Path | None = None, min_document_frequency: int = 2, max_length: int = 50,
                 pad_to_max: bool = False, batch_size: int = 32, val_fraction: float = 0.1, seed: int = 0,
                 label_smoothing: float = 0.0, tokenizer: IndexTokenizer | None = None) -> None:
        if n_labels not in (1, 2, 5):
            raise ValueError(f"labels must be 5 (stars), 2 (sentiment) or 1 (sentiment, one logit), got {n_labels}")
        self.train_path, self.val_path = Path(train), None if val is None else Path(val)
        self.vocab_path = None if vocab is None else Path(vocab)
        self.n_labels, self.max_length, self.batch_size, self.seed = n_labels, max_length, batch_size, seed
        self.min_df, self.pad_to_max, self.val_fraction = min_document_frequency, pad_to_max, val_fraction
        self.label_smoothing = label_smoothing
        reviews = load_reviews(self.train_path)
        labels, kept = task_labels(reviews.stars, n_labels)
        texts = [reviews.texts[i] for i in kept]
        if self.val_path is not None:
            val_reviews = load_reviews(self.val_path)
            val_labels, val_kept = task_labels(val_reviews.stars, n_labels)
            val_texts = [val_reviews.texts[i] for i in val_kept]
            held_out: set[int] = set()
        else:
            tr, va = split_validation(len(texts), val_fraction, seed)
            val_texts, val_labels = [texts[i] for i in va], labels[va]
            texts, labels = [texts[i] for i in tr], labels[tr]
            held_out = {int(kept[i]) for i in va}
        # unlabelled text for PPMI embeddings: every training review (3-star ones too for sentiment),
        # never the validation reviews
        self.train_texts = [t for i, t in enumerate(reviews.texts) if i not in held_out]
        if tokenizer is None:
            words = load_vocabulary(self.vocab_path) if self.vocab_path else select_vocabulary(texts, min_document_frequency)
            tokenizer = IndexTokenizer(words, "[UNK]", pad="[PAD]")
        self.tokenizer = tokenizer
        pad_to = max_length if pad_to_max else None
        self.train_ids, self.train_valid = encode_reviews(texts, tokenizer, max_length, pad_to)
        self.val_ids, self.val_valid = encode_reviews(val_texts, tokenizer, max_length, pad_to)
        self.train_labels = torch.as_tensor(labels, dtype=torch.long)
        self.val_labels = torch.as_tensor(val_labels, dtype=torch.long)

    def adapt_config(self, config: ClassifierConfig) -> ClassifierConfig:
        return config.replace(vocab_size=len(self.tokenizer), n_labels=self.n_labels, max_length=self.max_length,
                              pad_id=self.tokenizer.pad_id)

    def init_model(self, model: nn.Module) -> None:
        """Start the embedding table as the config asks (called once, before the first step).

        ``embedding_init="ppmi"``: co-occurrence vectors of the training reviews at full length
        (not cut to ``max_length``; labels unused, so 3-star reviews count for sentiment too;
        never the validation reviews), see ``data.cooccurrence``.
        """
        config = model.config
        if config.embedding_init != "ppmi":
            return
        ids, valid = encode_reviews(self.train_texts, self.tokenizer, PPMI_MAX_TOKENS)
        vectors = ppmi_vectors(ids, valid, config.vocab_size, config.dim, window=config.embedding_window,
                               seed=self.seed)  # (V, C)
        with torch.no_grad():
            model.embedding.weight.copy_(vectors)

    def steps_per_epoch(self) -> int:
        return max(1, len(self.train_labels) // self.batch_size)

    def batch(self, index: int) -> tuple[Tensor, Tensor, Tensor]:
        spe = self.steps_per_epoch()
        epoch, i = divmod(index, spe)
        order = np.random.default_rng([self.seed, epoch]).permutation(len(self.train_labels))
        rows = torch.from_numpy(order[i * self.batch_size : (i + 1) * self.batch_size])
        ids, valid = self.train_ids[rows], self.train_valid[rows]
        if not self.pad_to_max:  # crop to the longest review in the batch
            width = max(int(valid.sum(1).max()), 1)
            ids, valid = ids[:, :width], valid[:, :width]
        return ids, valid, self.train_labels[rows]

    def loss(self, model: nn.Module, batch: tuple[Tensor, Tensor, Tensor]) -> Tensor:
        ids, valid, labels = batch
        logits = model(ids, valid)  # (B, K)
        return self.loss_from_logits(logits, labels)

    def loss_from_logits(self, logits: Tensor, labels: Tensor, reduction: str = "mean") -> Tensor:
        if logits.shape[1] == 1:
            return F.binary_cross_entropy_with_logits(logits[:, 0].float(), labels.float(), reduction=reduction)
        return F.cross_entropy(logits.float(), labels, label_smoothing=self.label_smoothing, reduction=reduction)

    def evaluate(self, model: nn.Module) -> dict[str, float]:
        logits = predict_logits(model, self.val_ids, self.val_valid)
        preds = labels_to_predictions(logits)
        k = 2 if self.n_labels == 1 else self.n_labels
        matrix = confusion_matrix(self.val_labels.numpy(), preds.numpy(), k)
        return {"val_loss": self.loss_from_logits(logits, self.val_labels).item(),
                "val_accuracy": accuracy(self.val_labels.numpy(), preds.numpy()), "val_macro_f1": macro_f1(matrix)}

    def save(self, run_dir: Path) -> None:
        self.tokenizer.save(run_dir / "tokenizer.json")

    def describe(self) -> dict[str, Any]:
        paths = {"train": self.train_path, "val": self.val_path, "vocab": self.vocab_path}
        out: dict[str, Any] = {k: (None if p is None else str(p.resolve())) for k, p in paths.items()}
        out.update({f"{k}_sha256": sha256(p) for k, p in paths.items() if p is not None})
        out.update({"labels": self.n_labels, "max_length": self.max_length, "pad_to_max": self.pad_to_max,
                    "min_document_frequency": self.min_df, "batch_size": self.batch_size,
                    "val_fraction": self.val_fraction, "label_smoothing": self.label_smoothing,
                    "train_reviews": len(self.train_labels), "val_reviews": len(self.val_labels),
                    "vocabulary": len(self.tokenizer)})
        return out


# training defaults for `tlite train classifier` (flags override them); tuned on the MARC dev split
TRAIN_DEFAULTS = {"epochs": 3, "lr": 4e-3, "warmup_steps": 200, "weight_decay": 0.1, "eval_every": 0}


def add_arguments(parser) -> None:  # noqa: ANN001
    parser.add_argument("--train", help="training reviews (.jsonl or .csv)")
    parser.add_argument("--val", help="validation reviews; default: a seeded split of --train")
    parser.add_argument("--labels", type=int, default=None, choices=(1, 2, 5),
                        help="5 = stars, 2 = sentiment (3 stars dropped), 1 = sentiment with one logit")
    parser.add_argument("--vocab", help="vocabulary file, one word per line (default: built from --train)")
    parser.add_argument("--min-df", type=int, default=None, help="minimum document frequency for a vocabulary built from --train (default 2)")
    parser.add_argument("--label-smoothing", type=float, default=None)


def build(args, config: ClassifierConfig, seed: int, run_tokenizer=None, recorded: dict | None = None):  # noqa: ANN001, ANN201
    rec = recorded or {}
    train = rec.get("train") or args.train
    if not train:
        raise ValueError("give the training reviews with --train FILE.jsonl (MARC has no public download)")
    labels = rec.get("labels") or args.labels or (config.n_labels if config.n_labels in (1, 2, 5) else 5)

    def pick(key: str, arg: Any, default: Any) -> Any:
        return rec[key] if key in rec else (arg if arg is not None else default)

    return ClassifierTask(
        train, val=pick("val", args.val, None), n_labels=labels, vocab=pick("vocab", args.vocab, None),
        min_document_frequency=pick("min_document_frequency", args.min_df, 2), max_length=config.max_length,
        pad_to_max=config.head == "seed", batch_size=pick("batch_size", args.batch_size, 32),
        val_fraction=pick("val_fraction", args.val_fraction, 0.1), seed=seed,
        label_smoothing=pick("label_smoothing", args.label_smoothing, 0.0), tokenizer=run_tokenizer)

"""Review classifier task (post 000): 5 stars or binary sentiment from the review text.

Pipeline: simplify -> words -> at most ``max_length`` tokens -> ids (padded with the pad id).
The vocabulary comes from a file (the posts' 6,653 words) or from the training reviews with a
minimum document frequency. ``labels`` 5 = stars, 2 = negative/positive with 3 stars dropped,
1 = the post's single logit with binary cross-entropy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..config import ClassifierConfig
from ..data.reviews import choose_classes, encode_labels, has_order, left_out, load_reviews
from ..data.sources import sha256
from ..data.tables import split_validation
from ..errors import ConfigError, DataError, warn
from ..evaluation.metrics import accuracy, confusion_matrix, macro_f1, ordinal_errors
from ..evaluation.prediction import class_names, encode_for_classifier, is_ordinal, predict_logits, predictions
from ..models.ensemble import classifier_members
from ..tokenizers import Tokenizer
from ..training.task import TaskBase
from .classifier_settings import ClassifierSettings, class_weight_values
from .embeddings import ppmi_init, token_vectors, vectors_init
from .pretrained import Pretrained

Batch = tuple[Tensor, Tensor, Tensor]  # ids (B, T), valid (B, T), labels (B,)


def member_seed(seed: int, member: int) -> int:
    """The random seed of ensemble member ``member`` of a run with ``seed`` (member 0: ``seed`` itself)."""
    return seed if member == 0 else int(np.random.SeedSequence([seed, member]).generate_state(1)[0])


@dataclass(frozen=True)
class Labelled:
    """Texts and their class indices."""

    texts: list[str]
    labels: np.ndarray


@dataclass(frozen=True)
class Splits:
    """A classifier's records as training reads them: the training and validation texts with their class
    indices, the classes ``(n_labels, names)``, the text and label columns, the texts PPMI embeddings may
    count (every training record, labelled or dropped, never a validation one) and the files read."""

    train: Labelled
    val: Labelled
    classes: tuple[int, tuple[str, ...]]
    columns: tuple[str, str]
    unlabelled: list[str]
    sources: dict[str, Path | None]
    dropped: str = ""  # the records read but left out, by label value (``data.reviews.left_out``)


# the settings that decide which records a classifier is trained and validated on, and how they are scored
RECORD_SETTINGS = (
    "train",
    "val",
    "text_column",
    "label_column",
    "labels",
    "label_map",
    "ordinal",
    "val_fraction",
    "stratify",
)


def read_splits(settings: ClassifierSettings, seed: int = 0) -> Splits:
    """The table ``--train`` (and ``--val``, else the seeded ``--val-fraction`` split of ``--train``) read
    with the settings' columns and label map: what ``tlite train classifier`` trains on and what
    ``tlite baseline`` scores, so that the two are compared on the same records."""
    s = settings
    if not s.train:
        raise ConfigError("give the training records with --train FILE (a table of texts and labels)")
    train_path, val_path = Path(s.train), None if s.val is None else Path(s.val)
    options = ("--text-column", "--label-column")  # train classifier's and baseline's: errors point at them
    reviews = load_reviews(train_path, text_column=s.text_column, label_column=s.label_column, options=options)
    n_labels, names = choose_classes(reviews, s.labels, s.label_map)
    if s.ordinal and not has_order(reviews, s.label_map):
        raise ConfigError(
            f"--ordinal: the classes of {train_path}: column {reviews.label_column!r} ({', '.join(names[:6])}"
            f"{', ...' if len(names) > 6 else ''}) are names with no order (only sorted alphabetically), so a "
            "mean absolute error over them means nothing; give their order with --label-map NAME,NAME,... "
            "(lowest first), or leave --ordinal out"
        )
    labels, kept = encode_labels(reviews, n_labels, names, s.label_map)
    texts = [reviews.texts[i] for i in kept]
    dropped = [left_out(reviews, kept, "training" if val_path else "")]
    if val_path is not None:
        val_reviews = load_reviews(val_path, usual=(reviews.text_column, reviews.label_column), options=options)
        val_labels, val_kept = encode_labels(val_reviews, n_labels, names, s.label_map)
        dropped.append(left_out(val_reviews, val_kept, "validation"))
        val = Labelled([val_reviews.texts[i] for i in val_kept], val_labels)
        held_out: set[int] = set()
    else:
        tr, va = split_validation(len(texts), s.val_fraction, seed, labels if s.stratify else None)
        val = Labelled([texts[i] for i in va], labels[va])
        texts, labels = [texts[i] for i in tr], labels[tr]
        held_out = {int(kept[i]) for i in va}
    # unlabelled text for PPMI embeddings: every training review (3-star ones too for sentiment),
    # never the validation reviews
    unlabelled = [t for i, t in enumerate(reviews.texts) if i not in held_out]
    return Splits(
        Labelled(texts, labels),
        val,
        (n_labels, names),
        (reviews.text_column, reviews.label_column),
        unlabelled,
        {"train": train_path, "val": val_path},
        "; ".join(d for d in dropped if d),
    )


class ClassifierTask(TaskBase):
    name = "classifier"
    Settings = ClassifierSettings
    main_metric = "val_macro_f1"  # accuracy flatters a model that ignores the rare classes

    def __init__(
        self,
        settings: ClassifierSettings,
        config: ClassifierConfig,
        tokenizer: Tokenizer,
        train: Labelled,
        val: Labelled,
        *,
        seed: int = 0,
        unlabelled: list[str] | None = None,
        sources: dict[str, Path | None] | None = None,
        pretrained: Pretrained | None = None,
        classes: tuple[int, tuple[str, ...]] | None = None,
        columns: tuple[str, str] = ("review_body", "stars"),
        dropped: str = "",
    ) -> None:
        """``train``/``val`` in memory; ``unlabelled`` the texts PPMI embeddings count (default the
        training texts); ``sources`` the files they came from (for the run's record); ``classes`` the
        ``(n_labels, names)`` of ``data.reviews.choose_classes`` (default: the star task of
        ``settings.labels``); ``columns`` the text and label columns read; ``dropped`` says the records
        read but left out (``data.reviews.left_out``), for the note printed as training starts."""
        self.settings, self.seed, self.tokenizer, self.pretrained = settings, seed, tokenizer, pretrained
        self.n_labels, self.label_names = classes or (settings.labels or 5, ())
        self.columns = columns
        shown = ", ".join(class_names(self)[:12]) + (", ..." if len(class_names(self)) > 12 else "")
        self.note = (
            f"texts from column {columns[0]!r}, labels from column {columns[1]!r}: {max(self.n_labels, 2)} classes "
            f"({shown}); {len(train.texts)} training and {len(val.texts)} validation records"
            + ("" if (sources or {}).get("val") or not settings.stratify else " (a split stratified by class)")
            + (f"; {dropped}" if dropped else "")
        )
        self.sources = sources or {}
        self.max_length, self.pads_to_length = config.max_length, config.pads_to_length
        self.members = config.members
        self.unlabelled = train.texts if unlabelled is None else unlabelled
        self.train_ids, self.train_valid = encode_for_classifier(
            tokenizer, train.texts, self.max_length, self.pads_to_length
        )
        self.val_ids, self.val_valid = encode_for_classifier(tokenizer, val.texts, self.max_length, self.pads_to_length)
        self.train_labels = torch.as_tensor(train.labels, dtype=torch.long)
        self.val_labels = torch.as_tensor(val.labels, dtype=torch.long)
        self._check_splits()
        self.class_weights = None
        if settings.class_weights is not None:
            values = class_weight_values(settings.class_weights, train.labels, class_names(self))
            self.class_weights = torch.as_tensor(values, dtype=torch.float32)
            self.note += "\nclass weights: " + ", ".join(f"{n} {w:.3g}" for n, w in zip(class_names(self), values))
        self.vectors = None if settings.vectors is None else token_vectors(tokenizer, settings.vectors, config.dim)
        if self.vectors is not None:
            self.note += "\n" + self.vectors[2]

    @classmethod
    def prepare(
        cls,
        settings: ClassifierSettings,
        config: ClassifierConfig,
        seed: int = 0,
        tokenizers: dict[str, Tokenizer] | None = None,
    ) -> ClassifierTask:
        """Read the reviews (``--train``, ``--val`` or a random split of ``--train``) and build the
        tokenizer (the resumed run's, the pretrained run's, or a vocabulary file's or the training
        reviews' words)."""
        s = settings
        splits = read_splits(s, seed)
        vocab_path = None if s.vocab is None else Path(s.vocab)
        tokenizer = (tokenizers or {}).get("tokenizer")
        pretrained = None if s.init_from is None else Pretrained(Path(s.init_from), vocab_path)
        if tokenizer is None and pretrained is not None:
            tokenizer = pretrained.tokenizer
        if tokenizer is None:
            tokenizer = s.tokenizer(splits.train.texts, **({"pad": "[PAD]"} if s.padding == "pad" else {}))
        return cls(
            s,
            config,
            tokenizer,
            splits.train,
            splits.val,
            seed=seed,
            unlabelled=splits.unlabelled,
            sources={**splits.sources, "vocab": vocab_path},
            pretrained=pretrained,
            classes=splits.classes,
            columns=splits.columns,
            dropped=splits.dropped,
        )

    def _check_splits(self) -> None:
        """Empty splits are errors before training starts; classes missing from a split are warned about."""
        if self.label_names:
            what = f"{len(self.label_names)}-class"
        else:
            what = "sentiment (3-star reviews dropped)" if self.n_labels in (1, 2) else "5-star"
        train_path, val_path = self.sources.get("train"), self.sources.get("val")
        if len(self.train_labels) == 0:
            raise DataError(f"{train_path}: no training records for the {what} task")
        if len(self.val_labels) == 0:
            source = val_path or f"--val-fraction {self.settings.val_fraction} of {train_path}"
            raise DataError(
                f"the validation split ({source}) holds no records for the {what} task; give --val FILE "
                "or a larger --val-fraction"
            )
        classes = class_names(self)
        for name, labels in (("training", self.train_labels), ("validation", self.val_labels)):
            missing = sorted(set(range(len(classes))) - set(labels.tolist()))
            if missing:
                shown = ", ".join(classes[c] for c in missing)
                warn(f"the {name} records have no example of {shown}; macro-F1 counts that class as 0")

    def model_config(self, config: ClassifierConfig) -> ClassifierConfig:
        """Vocabulary, labels and pad id from the data; with ``init_from``, the encoder's shape from the
        pretrained run (its ``dim``, heads, hidden size, blocks, activation, norm placement, biases)."""
        if self.pretrained is not None:
            config = config.replace(**self.pretrained.shape())
        return config.replace(
            vocab_size=len(self.tokenizer),
            n_labels=self.n_labels,
            label_names=self.label_names,
            pad_id=self.tokenizer.pad_id,
        )

    def lr_plan(self, model: nn.Module) -> dict[str, tuple[float, int]] | None:
        """Per-parameter ``(lr_scale, frozen_until)`` for fine-tuning (``layer_lr_decay``,
        ``freeze_encoder_steps``); None when every parameter shares the schedule."""
        s = self.settings
        if s.layer_lr_decay == 1.0 and s.freeze_encoder_steps == 0:
            return None
        n = classifier_members(model)[0].config.n_blocks  # an ensemble's members share it
        plan: dict[str, tuple[float, int]] = {}
        for name, _ in model.named_parameters():
            local = name.split(".", 2)[2] if name.startswith("members.") else name  # an ensemble member's own name
            if local.startswith("encoder.embedding."):
                depth = n + 1
            elif local.startswith("encoder.blocks."):
                depth = n - int(local.split(".")[2])  # the top block is one below the head
            else:
                continue  # the head, the final norm and the bigram table learn at the full rate from step 0
            plan[name] = (s.layer_lr_decay**depth, s.freeze_encoder_steps)
        return plan

    def init_model(self, model: nn.Module) -> None:
        """Start the embedding table as the settings ask (called once, before the first step).

        ``embedding_init="ppmi"``: co-occurrence vectors of the training reviews at full length
        (not cut to ``max_length``; labels unused, so 3-star reviews count for sentiment too;
        never the validation reviews), see ``data.cooccurrence``. ``init_from``: the pretrained
        encoder instead. ``vectors``: then the rows of the words a vectors file holds.
        """
        members = classifier_members(model)
        if self.pretrained is not None:
            for member in members:
                self.pretrained.transfer(member)
        elif self.settings.embedding_init == "ppmi":
            tables = [member.encoder.embedding.weight for member in members]
            seeds = [member_seed(self.seed, k) for k in range(len(members))]
            ppmi_init(tables, self.tokenizer, self.unlabelled, self.settings.embedding_window, seeds)
        if self.vectors is not None:
            vectors_init([member.encoder.embedding.weight for member in members], *self.vectors[:2])

    def steps_per_epoch(self) -> int:
        return max(1, len(self.train_labels) // self.settings.batch_size)

    def batch(self, index: int) -> Batch | list[Batch]:
        """Micro-batch ``index``: ``(ids, valid, labels)``; for an ensemble, one such batch per member,
        each drawn from the member's own order of the reviews (member 0's order is the single model's)."""
        if self.members == 1:
            return self._member_batch(index, 0)
        return [self._member_batch(index, k) for k in range(self.members)]

    def _member_batch(self, index: int, member: int) -> Batch:
        epoch, i = divmod(index, self.steps_per_epoch())
        size = self.settings.batch_size
        key = [self.seed, epoch] if member == 0 else [self.seed, epoch, member]
        order = np.random.default_rng(key).permutation(len(self.train_labels))
        rows = torch.from_numpy(order[i * size : (i + 1) * size])
        ids, valid = self.train_ids[rows], self.train_valid[rows]
        if not self.pads_to_length:  # crop to the longest review in the batch
            width = max(int(valid.sum(1).max()), 1)
            ids, valid = ids[:, :width], valid[:, :width]
        return ids, valid, self.train_labels[rows]

    def loss(self, model: nn.Module, batch: Batch | list[Batch]) -> Tensor:
        """Cross-entropy of the logits; for an ensemble the mean of the members' own losses on their
        own batches (each member learns alone: the loss of the averaged prediction would couple them)."""
        if isinstance(batch, list):
            members = classifier_members(model)
            losses = [self.loss_from_logits(m(ids, valid), labels) for m, (ids, valid, labels) in zip(members, batch)]
            return torch.stack(losses).mean()
        ids, valid, labels = batch
        return self.loss_from_logits(model(ids, valid), labels)  # logits (B, K)

    def loss_from_logits(self, logits: Tensor, labels: Tensor) -> Tensor:
        """Cross-entropy, each record weighted by its class's ``class_weights`` when given (a weighted mean:
        the weights' scale does not change the learning rate's)."""
        weights = None if self.class_weights is None else self.class_weights.to(logits.device)
        if logits.shape[1] == 1:
            if weights is None:
                return F.binary_cross_entropy_with_logits(logits[:, 0].float(), labels.float())
            per = F.binary_cross_entropy_with_logits(logits[:, 0].float(), labels.float(), reduction="none")
            w = weights[labels]
            return (per * w).sum() / w.sum().clamp_min(1e-12)
        return F.cross_entropy(logits.float(), labels, weight=weights, label_smoothing=self.settings.label_smoothing)

    @property
    def metrics(self) -> tuple[str, ...]:  # type: ignore[override]  # computed from the data read
        ordinal = is_ordinal(self.label_names, self.n_labels, self.settings.ordinal)
        return ("val_loss", "val_accuracy", "val_macro_f1", *(("val_mae", "val_off_by_one") if ordinal else ()))

    def evaluate(self, model: nn.Module, split: str = "val") -> dict[str, float]:
        """Loss, accuracy and macro-F1 on the validation split (``val_*``) or the whole training split
        (``train_full_*``, in evaluation mode: no dropout)."""
        ids, valid, labels = (
            (self.val_ids, self.val_valid, self.val_labels)
            if split == "val"
            else (self.train_ids, self.train_valid, self.train_labels)
        )
        prefix = "val_" if split == "val" else "train_full_"
        logits = predict_logits(model, ids, valid)
        preds = predictions(logits).numpy()
        matrix = confusion_matrix(labels.numpy(), preds, max(self.n_labels, 2))
        metrics = {
            f"{prefix}loss": self.loss_from_logits(logits, labels).item(),
            f"{prefix}accuracy": accuracy(labels.numpy(), preds),
            f"{prefix}macro_f1": macro_f1(matrix),
        }
        if is_ordinal(self.label_names, self.n_labels, self.settings.ordinal):
            metrics.update({prefix + k: v for k, v in ordinal_errors(labels.numpy(), preds).items()})
        return metrics

    def tokenizers(self) -> dict[str, Tokenizer]:
        return {"tokenizer": self.tokenizer}

    def describe(self) -> dict[str, Any]:
        paths = {k: self.sources.get(k) for k in ("train", "val", "vocab")}
        paths["vectors"] = None if self.settings.vectors is None else Path(self.settings.vectors)
        out: dict[str, Any] = asdict(self.settings)
        out.update({k: (None if p is None else str(p.resolve())) for k, p in paths.items()})
        out.update({f"{k}_sha256": sha256(p) for k, p in paths.items() if p is not None})
        out.update(
            {
                "text_column": self.columns[0],
                "label_column": self.columns[1],
                "classes": class_names(self),
                "train_records": len(self.train_labels),
                "val_split": "file"
                if self.sources.get("val")
                else "stratified"
                if self.settings.stratify
                else "random",
                "class_weight_values": None if self.class_weights is None else self.class_weights.tolist(),
                "val_records": len(self.val_labels),
                "vocabulary": len(self.tokenizer),
            }
        )
        return out

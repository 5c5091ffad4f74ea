"""Translation task (post 001, Multi30k German -> English): length-bucketed batches of sentence
pairs, label-smoothed cross-entropy on the target, validation loss and BLEU.

Tokenizers: a joint BPE (default; allows shared embeddings), separate BPEs, or word level.
Shapes: B pairs, S source length, T target length, V target vocabulary.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .. import validate
from ..config import Seq2SeqConfig
from ..data.sources import resolve, sha256
from ..data.tables import split_validation
from ..data.translation import Pairs, TranslationBatch, bucket_batches, filter_by_length, load_pairs, make_batch
from ..errors import ConfigError, DataError, warn
from ..evaluation.metrics import bits_per_unit
from ..evaluation.translation import corpus_scores
from ..generation.translate import DecodeSettings, decode_batch
from ..models import TransformerSeq2Seq
from ..settings import setting
from ..tokenizers import BPETokenizer, Tokenizer, WordTokenizer, pad_batch
from ..tokenizers.text import words_and_punctuation
from ..training.task import TaskBase
from .embeddings import token_vectors, vectors_init

TOKENIZERS = ("joint-bpe", "bpe", "word")
MULTI30K = {"train_src": "train.de.gz", "train_tgt": "train.en.gz", "val_src": "val.de.gz", "val_tgt": "val.en.gz"}


@dataclass(frozen=True)
class Seq2SeqSettings:
    train_src: str | None = setting(
        "training source sentences, one per line; or, without --train-tgt, one table of pairs (.tsv, .csv, .jsonl, "
        ".json, .parquet, a datasets folder)",
        None,
        none="multi30k/train.de.gz from the data folder when no data file is given",
        path=True,
    )
    train_tgt: str | None = setting("training target sentences", None, none="multi30k/train.en.gz", path=True)
    val_src: str | None = setting(
        "validation source sentences (or a table of pairs)",
        None,
        none="multi30k/val.de.gz; with your own --train-src, a split of it (--val-fraction)",
        path=True,
    )
    val_tgt: str | None = setting("validation target sentences", None, none="multi30k/val.en.gz", path=True)
    src_column: str | None = setting(
        "a table's source column (or the source language of a 'translation' column)",
        None,
        none="src, source, or the first of two text columns",
    )
    tgt_column: str | None = setting(
        "a table's target column (or the target language)", None, none="tgt, target, or the second of two"
    )
    val_fraction: float = setting(
        "fraction of your training pairs held out for validation when no validation pairs are given", 0.05
    )
    tokenizer: str = setting(
        "joint BPE over both languages (allows one shared embedding table), a BPE per language, or words",
        "joint-bpe",
        choices=TOKENIZERS,
    )
    vocab_size: int = setting("BPE vocabulary size", 8000, applies=("tokenizer", ("joint-bpe", "bpe")))
    max_tokens: int = setting("padded tokens per length-bucketed batch", 4096)
    label_smoothing: float = setting("label smoothing of the cross-entropy", 0.1)
    vectors: str | None = setting(
        "pretrained word vectors in GloVe's text format, as post 001 starts from (a word and its numbers per line, "
        "as many numbers as the model's dim): the rows of the words it holds start from them",
        None,
        none="no vectors",
        path=True,
    )
    bleu_sentences: int = setting(
        "validation sentences translated (greedy) for BLEU at each evaluation (0 = skip)", 200
    )

    def __post_init__(self) -> None:
        validate.flags(self)
        validate.choice("tokenizer", self.tokenizer, TOKENIZERS)
        for name, low in (("vocab_size", 5), ("max_tokens", 1), ("bleu_sentences", 0)):
            validate.integer(name, getattr(self, name), low)
        validate.number("label_smoothing", self.label_smoothing, 0, 1, high_open=True)
        validate.number("val_fraction", self.val_fraction, 0, 1, high_open=True)


def _without_empty(src: list[str], tgt: list[str], name: str) -> tuple[list[str], list[str]]:
    """Pairs whose source and target both hold text; the others are dropped with a count."""
    keep = [i for i, (a, b) in enumerate(zip(src, tgt)) if a.strip() and b.strip()]
    if len(keep) < len(src):
        warn(f"dropped {len(src) - len(keep):,} {name} pairs with an empty source or target line")
    return [src[i] for i in keep], [tgt[i] for i in keep]


def word_tokenizer(sentences: list[str], min_frequency: int = 2) -> WordTokenizer:
    """Word-level tokenizer with ``<unk> <pad> <bos> <eos>`` (ids 0..3): the words and punctuation
    marks seen at least ``min_frequency`` times, most frequent first."""
    counts = Counter(t for s in sentences for t in words_and_punctuation(s))
    vocab = sorted((w for w, n in counts.items() if n >= min_frequency), key=lambda w: (-counts[w], w))
    return WordTokenizer(vocab, "<unk>", pad="<pad>", bos="<bos>", eos="<eos>", split="punct")


def read_pairs(
    settings: Seq2SeqSettings, seed: int
) -> tuple[tuple[list[str], list[str]], tuple[list[str], list[str]], dict[str, Path], tuple[str, str]]:
    """``(train, val, files read, languages)``. With no data file given, Multi30k from the data folder;
    with any file given, only the user's files: never a default corpus beside them (its lines would pair
    with the user's). Without validation pairs, a seeded ``val_fraction`` of the training pairs."""
    s = settings
    columns = (s.src_column, s.tgt_column)
    if not any(getattr(s, k) for k in MULTI30K):
        paths = {k: resolve("multi30k", name) for k, name in MULTI30K.items()}
        train = load_pairs(paths["train_src"], paths["train_tgt"])
        val = load_pairs(paths["val_src"], paths["val_tgt"])
    else:
        for side, other in (("train_tgt", "train_src"), ("val_tgt", "val_src")):
            if getattr(s, side) and not getattr(s, other):
                flag = "--" + other.replace("_", "-")
                raise ConfigError(f"--{side.replace('_', '-')} is given without {flag}: give the source sentences too")
        if not s.train_src:
            raise ConfigError("--val-src is given without training pairs: give --train-src (and --train-tgt)")
        paths = {k: Path(getattr(s, k)) for k in MULTI30K if getattr(s, k)}
        train = load_pairs(paths["train_src"], paths.get("train_tgt"), columns)
        if s.val_src:
            val = load_pairs(paths["val_src"], paths.get("val_tgt"), columns)
        else:
            tr, va = split_validation(len(train.src), s.val_fraction, seed)
            if len(va) == 0:
                raise DataError(
                    f"no validation pairs: --val-fraction {s.val_fraction} of {len(train.src)} pairs holds none; "
                    "give --val-src (and --val-tgt) or a larger --val-fraction"
                )
            val = Pairs([train.src[i] for i in va], [train.tgt[i] for i in va], train.languages)
            train = Pairs([train.src[i] for i in tr], [train.tgt[i] for i in tr], train.languages)
    src, tgt = _without_empty(train.src, train.tgt, "training")
    return (src, tgt), _without_empty(val.src, val.tgt, "validation"), paths, train.languages


class Seq2SeqTask(TaskBase):
    name = "seq2seq"
    Settings = Seq2SeqSettings

    def __init__(
        self,
        settings: Seq2SeqSettings,
        config: Seq2SeqConfig,
        tokenizers: tuple[Tokenizer, Tokenizer],
        train: tuple[list[str], list[str]],
        val: tuple[list[str], list[str]],
        *,
        seed: int = 0,
        sources: dict[str, Path] | None = None,
        languages: tuple[str, str] = ("source", "target"),
    ) -> None:
        """``tokenizers``: (source, target); ``train``/``val``: aligned (source, target) sentences;
        ``languages`` their names (for the run's record)."""
        self.settings, self.seed, self.max_length = settings, seed, config.max_length
        self.languages = languages
        self.src_tok, self.tgt_tok = tokenizers
        self.sources = sources or {}
        if self.src_tok.pad_id != self.tgt_tok.pad_id:
            raise DataError("source and target tokenizers must share the pad id")
        src, tgt = train
        self.val_src_text, self.val_tgt_text = val
        limit = config.max_length - 1  # room for BOS (decoder input) or EOS (source, decoder output)
        self.train_src, self.train_tgt = filter_by_length(
            self._encode(self.src_tok, src, True), self._encode(self.tgt_tok, tgt, False), limit
        )
        self.val_src, self.val_tgt = filter_by_length(
            self._encode(self.src_tok, self.val_src_text, True),
            self._encode(self.tgt_tok, self.val_tgt_text, False),
            limit,
        )
        dropped = []
        for name, kept, total in (("training", self.train_src, src), ("validation", self.val_src, self.val_src_text)):
            if not kept:
                raise DataError(f"no {name} pair fits max_length={config.max_length} tokens; raise --set max_length")
            if len(kept) < len(total):
                dropped.append(f"{len(total) - len(kept):,} {name}")
                warn(
                    f"dropped {len(total) - len(kept):,} of {len(total):,} {name} pairs longer than "
                    f"max_length={config.max_length} tokens"
                )
        self.note = self._read_note(dropped, config.max_length)
        self._epoch_batches: tuple[int, list[list[int]]] | None = None
        self._steps_per_epoch: int | None = None
        self._val_chars: int | None = None  # the validation targets' characters (bits per character divide by them)
        # pretrained vectors (post 001's GloVe) for the source table and, when it is another, the target's
        self.vectors = []
        if settings.vectors is not None:
            toks = [self.src_tok] if self.tgt_tok is self.src_tok else [self.src_tok, self.tgt_tok]
            self.vectors = [token_vectors(tok, settings.vectors, config.dim) for tok in toks]
            self.note = "\n".join([self.note, *(note for _, _, note in self.vectors)])

    def _read_note(self, dropped: list[str], max_length: int) -> str:
        """One line on what was read, printed as training starts (as the other families print theirs): the
        languages, the files, the pairs of each split and those left out for their length."""
        files = [Path(self.sources[k]).name for k in ("train_src", "train_tgt") if self.sources.get(k)]
        place = f" from {' and '.join(files)}" if files else ""
        line = (
            f"{self.languages[0]} -> {self.languages[1]} pairs{place}: {len(self.train_src):,} training and "
            f"{len(self.val_src):,} validation pairs"
        )
        if dropped:
            line += f"; left out {' and '.join(dropped)} pairs longer than max_length={max_length} tokens"
        return line

    def init_model(self, model: nn.Module) -> None:
        """``vectors``: the rows of the words the file holds, in the source table and the target's."""
        if not self.vectors:
            return
        source, target = model.get_parameter("encoder.embedding.weight"), model.get_parameter("tgt_embedding.weight")
        for i, table in enumerate([source] if target is source else [source, target]):
            ids, rows, _ = self.vectors[min(i, len(self.vectors) - 1)]  # one tokenizer (joint) serves both tables
            vectors_init([table], ids, rows)

    @classmethod
    def prepare(
        cls,
        settings: Seq2SeqSettings,
        config: Seq2SeqConfig,
        seed: int = 0,
        tokenizers: dict[str, Tokenizer] | None = None,
    ) -> Seq2SeqTask:
        """Read the sentence pairs (Multi30k from the data folder for files not given) and train the
        tokenizers on the training pairs (or take the resumed run's)."""
        (src, tgt), val, paths, languages = read_pairs(settings, seed)
        if tokenizers:
            pair = tokenizers["src_tokenizer"], tokenizers["tgt_tokenizer"]
        elif settings.tokenizer == "joint-bpe":
            joint = BPETokenizer.train(src + tgt, settings.vocab_size)
            pair = joint, joint
        elif settings.tokenizer == "bpe":
            pair = BPETokenizer.train(src, settings.vocab_size), BPETokenizer.train(tgt, settings.vocab_size)
        else:
            pair = word_tokenizer(src), word_tokenizer(tgt)
        return cls(settings, config, pair, (src, tgt), val, seed=seed, sources=paths, languages=languages)

    @staticmethod
    def _encode(tok: Tokenizer, texts: list[str], add_eos: bool) -> list[list[int]]:
        rows = tok.encode_many(texts)
        return [r + [tok.need("eos")] for r in rows] if add_eos else rows

    def model_config(self, config: Seq2SeqConfig) -> Seq2SeqConfig:
        shared = self.src_tok is self.tgt_tok
        return config.replace(
            src_vocab_size=len(self.src_tok),
            tgt_vocab_size=len(self.tgt_tok),
            pad_id=self.src_tok.pad_id,
            share_embeddings=shared and config.share_embeddings,
        )

    def _batches(self, epoch: int) -> list[list[int]]:
        if self._epoch_batches is None or self._epoch_batches[0] != epoch:
            self._epoch_batches = (
                epoch,
                bucket_batches(
                    self.train_src, self.train_tgt, self.settings.max_tokens, seed=self.seed * 100_003 + epoch
                ),
            )
        return self._epoch_batches[1]

    def steps_per_epoch(self) -> int:
        # every epoch cuts the same length-sorted pairs, so every epoch has as many batches as the first;
        # counted once (recounting rebuilt epoch 0's batches at every step of the later epochs)
        if self._steps_per_epoch is None:
            self._steps_per_epoch = len(self._batches(0))
        return self._steps_per_epoch

    def batch_of(self, src: list[list[int]], tgt: list[list[int]], idx: list[int]) -> TranslationBatch:
        """The pairs ``idx`` of ``src``/``tgt`` as one padded teacher-forcing batch."""
        return make_batch(
            [src[j] for j in idx],
            [tgt[j] for j in idx],
            self.tgt_tok.need("pad"),
            self.tgt_tok.need("bos"),
            self.tgt_tok.need("eos"),
        )

    def batch(self, index: int) -> TranslationBatch:
        epoch, i = divmod(index, self.steps_per_epoch())
        batches = self._batches(epoch)
        return self.batch_of(self.train_src, self.train_tgt, batches[i % len(batches)])

    def loss(self, model: nn.Module, batch: TranslationBatch, label_smoothing: float | None = None) -> torch.Tensor:
        logits = model(batch.src, batch.tgt_in, batch.src_valid, batch.tgt_valid)  # (B, T, V)
        smoothing = self.settings.label_smoothing if label_smoothing is None else label_smoothing
        return F.cross_entropy(
            logits.flatten(0, 1).float(),
            batch.tgt_out.flatten(),
            ignore_index=self.tgt_tok.need("pad"),
            label_smoothing=smoothing,
        )

    @property
    def main_metric(self) -> str:  # type: ignore[override]  # computed from the data read
        """BLEU, when evaluations translate (``bleu_sentences``); else the validation loss."""
        return "val_bleu" if self.settings.bleu_sentences else "val_loss"

    @property
    def metrics(self) -> tuple[str, ...]:  # type: ignore[override]  # computed from the data read
        return ("val_loss", "val_bits_per_char", *(("val_bleu",) if self.settings.bleu_sentences else ()))

    def evaluate(self, model: TransformerSeq2Seq, split: str = "val") -> dict[str, float]:
        """Validation loss, the same in bits per character of the target sentences (an end counted as one;
        comparable across tokenizers) and greedy BLEU on the first ``bleu_sentences``; or the training
        split's loss as ``train_full_loss``."""
        device = next(model.parameters()).device
        src_ids, tgt_ids = (self.val_src, self.val_tgt) if split == "val" else (self.train_src, self.train_tgt)
        total, count = 0.0, 0
        for idx in bucket_batches(src_ids, tgt_ids, self.settings.max_tokens, seed=None):
            b = self.batch_of(src_ids, tgt_ids, idx).to(device)
            n = int(b.tgt_valid.sum())
            total += float(self.loss(model, b, label_smoothing=0.0)) * n
            count += n
        if split != "val":
            return {"train_full_loss": total / count}
        if self._val_chars is None:  # each target sentence's characters and its end, counted once
            self._val_chars = sum(len(self.tgt_tok.decode(ids)) + 1 for ids in self.val_tgt)
        result = {"val_loss": total / count, "val_bits_per_char": bits_per_unit(total / count, count, self._val_chars)}
        n = min(self.settings.bleu_sentences, len(self.val_src))
        if n:
            hyps = []
            for start in range(0, n, 128):
                src, _ = pad_batch(self.val_src[start : min(start + 128, n)], self.src_tok.need("pad"))
                out = decode_batch(
                    model, src.to(device), self.tgt_tok.need("bos"), self.tgt_tok.need("eos"), DecodeSettings()
                )
                hyps += [self.tgt_tok.decode(ids) for ids in out]
            refs = [self.tgt_tok.decode(ids) for ids in self.val_tgt[:n]]
            result["val_bleu"] = corpus_scores(hyps, refs)["bleu"]
        return result

    def tokenizers(self) -> dict[str, Tokenizer]:
        return {"src_tokenizer": self.src_tok, "tgt_tokenizer": self.tgt_tok}

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self.settings)
        out.update({k: str(p.resolve()) for k, p in self.sources.items()})
        out.update({f"{k}_sha256": sha256(p) for k, p in self.sources.items()})
        if self.settings.vectors is not None:
            out.update(
                {
                    "vectors": str(Path(self.settings.vectors).resolve()),
                    "vectors_sha256": sha256(Path(self.settings.vectors)),
                }
            )
        out.update({"max_length": self.max_length, "train_pairs": len(self.train_src), "val_pairs": len(self.val_src)})
        out.update({"source_language": self.languages[0], "target_language": self.languages[1]})
        return out

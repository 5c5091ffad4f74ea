"""Translation task (seed 001, Multi30k German -> English): length-bucketed batches of sentence
pairs, label-smoothed cross-entropy on the target, validation loss and BLEU.

Tokenizers: a joint BPE (default; allows shared embeddings), separate BPEs, or word level.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..config import Seq2SeqConfig
from ..data.sources import sha256
from ..data.translation import (TranslationBatch, bucket_batches, build_word_tokenizer, filter_by_length, load_parallel,
                                make_batch, word_tokenize)
from ..tokenizers.bpe import BPETokenizer


class Seq2SeqTask:
    name = "seq2seq"

    def __init__(self, train_src: str | Path, train_tgt: str | Path, val_src: str | Path, val_tgt: str | Path, *,
                 tokenizer: str = "joint-bpe", vocab_size: int = 8000, max_length: int = 128,
                 max_tokens: int = 4096, label_smoothing: float = 0.1, seed: int = 0, bleu_sentences: int | None = None,
                 tokenizers: dict | None = None) -> None:
        if tokenizer not in ("joint-bpe", "bpe", "word"):
            raise ValueError(f"tokenizer must be joint-bpe, bpe or word, got {tokenizer!r}")
        self.paths = {"train_src": Path(train_src), "train_tgt": Path(train_tgt), "val_src": Path(val_src),
                      "val_tgt": Path(val_tgt)}
        self.tokenizer_kind, self.vocab_size, self.max_length = tokenizer, vocab_size, max_length
        self.max_tokens, self.label_smoothing, self.seed, self.bleu_sentences = max_tokens, label_smoothing, seed, bleu_sentences
        src, tgt = load_parallel(self.paths["train_src"], self.paths["train_tgt"])
        self.val_src_text, self.val_tgt_text = load_parallel(self.paths["val_src"], self.paths["val_tgt"])
        if tokenizers:
            self.src_tok, self.tgt_tok = tokenizers["src_tokenizer"], tokenizers["tgt_tokenizer"]
        elif tokenizer == "joint-bpe":
            self.src_tok = self.tgt_tok = BPETokenizer.train(src + tgt, vocab_size)
        elif tokenizer == "bpe":
            self.src_tok, self.tgt_tok = BPETokenizer.train(src, vocab_size), BPETokenizer.train(tgt, vocab_size)
        else:
            self.src_tok, self.tgt_tok = build_word_tokenizer(src), build_word_tokenizer(tgt)
        if self.src_tok.pad_id != self.tgt_tok.pad_id:
            raise ValueError("source and target tokenizers must share the pad id")
        self.train_src, self.train_tgt = filter_by_length(self._encode(self.src_tok, src, True),
                                                          self._encode(self.tgt_tok, tgt, False), max_length - 1)
        self.val_src, self.val_tgt = filter_by_length(self._encode(self.src_tok, self.val_src_text, True),
                                                      self._encode(self.tgt_tok, self.val_tgt_text, False),
                                                      max_length - 1)
        self._epoch_batches: tuple[int, list[list[int]]] | None = None

    @staticmethod
    def _encode(tok, texts: list[str], add_eos: bool) -> list[list[int]]:  # noqa: ANN001
        if getattr(tok, "kind", "") == "bpe":
            rows = tok.encode_many(texts)
        else:
            rows = [tok.encode(word_tokenize(t)) for t in texts]
        return [r + [tok.eos_id] for r in rows] if add_eos else rows

    def adapt_config(self, config: Seq2SeqConfig) -> Seq2SeqConfig:
        shared = self.src_tok is self.tgt_tok
        return config.replace(src_vocab_size=len(self.src_tok), tgt_vocab_size=len(self.tgt_tok),
                              pad_id=self.src_tok.pad_id, max_length=self.max_length,
                              share_embeddings=shared and config.share_embeddings)

    def _batches(self, epoch: int) -> list[list[int]]:
        if self._epoch_batches is None or self._epoch_batches[0] != epoch:
            self._epoch_batches = (epoch, bucket_batches(self.train_src, self.train_tgt, self.max_tokens,
                                                         seed=self.seed * 100_003 + epoch))
        return self._epoch_batches[1]

    def steps_per_epoch(self) -> int:
        return len(self._batches(0))

    def batch(self, index: int) -> TranslationBatch:
        epoch, i = divmod(index, self.steps_per_epoch())
        idx = self._batches(epoch)[i % len(self._batches(epoch))]
        return make_batch([self.train_src[j] for j in idx], [self.train_tgt[j] for j in idx], self.tgt_tok.pad_id,
                          self.tgt_tok.bos_id, self.tgt_tok.eos_id)

    def loss(self, model: nn.Module, batch: TranslationBatch, label_smoothing: float | None = None) -> torch.Tensor:
        logits = model(batch.src, batch.tgt_in, batch.src_valid, batch.tgt_valid)  # (B, T, V)
        smoothing = self.label_smoothing if label_smoothing is None else label_smoothing
        return F.cross_entropy(logits.flatten(0, 1).float(), batch.tgt_out.flatten(), ignore_index=self.tgt_tok.pad_id,
                               label_smoothing=smoothing)

    def evaluate(self, model: nn.Module) -> dict[str, float]:
        device = next(model.parameters()).device
        batches = bucket_batches(self.val_src, self.val_tgt, self.max_tokens, seed=None)
        total, count = 0.0, 0
        for idx in batches:
            b = make_batch([self.val_src[j] for j in idx], [self.val_tgt[j] for j in idx], self.tgt_tok.pad_id,
                           self.tgt_tok.bos_id, self.tgt_tok.eos_id).to(device)
            n = int(b.tgt_valid.sum())
            total += float(self.loss(model, b, label_smoothing=0.0)) * n
            count += n
        result = {"val_loss": total / count}
        if self.bleu_sentences != 0:
            from ..evaluation.translation import corpus_scores
            from ..generation.translate import DecodeSettings, decode_batch, detokenize
            from ..tokenizers.index import pad_batch

            n = len(self.val_src) if self.bleu_sentences is None else min(self.bleu_sentences, len(self.val_src))
            hyps = []
            for start in range(0, n, 128):
                src, _ = pad_batch(self.val_src[start : min(start + 128, n)], self.src_tok.pad_id)
                out = decode_batch(model, src.to(device), self.tgt_tok.bos_id, self.tgt_tok.eos_id, DecodeSettings())
                hyps += [detokenize(self.tgt_tok, ids) for ids in out]
            refs = [detokenize(self.tgt_tok, ids) for ids in self.val_tgt[:n]]
            result["val_bleu"] = corpus_scores(hyps, refs)["bleu"]
        return result

    def save(self, run_dir: Path) -> None:
        self.src_tok.save(run_dir / "src_tokenizer.json")
        self.tgt_tok.save(run_dir / "tgt_tokenizer.json")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: str(p.resolve()) for k, p in self.paths.items()}
        out.update({f"{k}_sha256": sha256(p) for k, p in self.paths.items()})
        out.update({"tokenizer": self.tokenizer_kind, "vocab_size": self.vocab_size, "max_length": self.max_length,
                    "max_tokens": self.max_tokens, "label_smoothing": self.label_smoothing,
                    "bleu_sentences": self.bleu_sentences, "train_pairs": len(self.train_src),
                    "val_pairs": len(self.val_src), "batch_size": None})
        return out


# defaults sized for the 60-minute budget on a 2-core CPU (18 epochs of ~160 s with seq2seq-small)
TRAIN_DEFAULTS = {"schedule": "cosine", "warmup_steps": 300, "lr": 1e-3, "epochs": 18, "eval_every": 0,
                  "weight_decay": 0.01}


def add_arguments(parser) -> None:  # noqa: ANN001
    parser.add_argument("--train-src")
    parser.add_argument("--train-tgt")
    parser.add_argument("--val-src")
    parser.add_argument("--val-tgt")
    parser.add_argument("--tokenizer", choices=("joint-bpe", "bpe", "word"), default=None)
    parser.add_argument("--vocab-size", type=int, default=None, help="BPE vocabulary size (default 8000)")
    parser.add_argument("--max-tokens", type=int, default=None, help="tokens per length-bucketed batch (default 4096)")
    parser.add_argument("--label-smoothing", type=float, default=None)
    parser.add_argument("--bleu-sentences", type=int, default=None,
                        help="validation sentences translated (greedy) for BLEU at each evaluation (default 200; "
                             "0 = skip)")


def build(args, config: Seq2SeqConfig, seed: int, run_tokenizers=None, recorded: dict | None = None):  # noqa: ANN001, ANN201
    rec = recorded or {}
    paths = {}
    for key in ("train_src", "train_tgt", "val_src", "val_tgt"):
        value = rec.get(key) or getattr(args, key)
        if not value:
            from ..data.sources import resolve

            name = {"train_src": "train.de.gz", "train_tgt": "train.en.gz", "val_src": "val.de.gz",
                    "val_tgt": "val.en.gz"}[key]
            value = resolve("multi30k", name)
        paths[key] = value

    def pick(key: str, arg: Any, default: Any) -> Any:
        return rec[key] if key in rec else (arg if arg is not None else default)

    return Seq2SeqTask(**paths, tokenizer=pick("tokenizer", args.tokenizer, "joint-bpe"),
                       vocab_size=pick("vocab_size", args.vocab_size, 8000), max_length=config.max_length,
                       max_tokens=pick("max_tokens", args.max_tokens, 4096),
                       label_smoothing=pick("label_smoothing", args.label_smoothing, 0.1), seed=seed,
                       bleu_sentences=pick("bleu_sentences", args.bleu_sentences, 200), tokenizers=run_tokenizers)

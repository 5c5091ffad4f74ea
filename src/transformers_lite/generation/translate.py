"""Decoding for the encoder-decoder translator: batched greedy and beam search, with caches.

Shapes: B sentences, K beams, S source length, V target vocabulary. The encoder runs once; each
decoder step feeds only the newest token, with a KV cache for decoder self-attention and the
encoder keys/values of every cross-attention layer computed on the first step and reused.
``use_cache=False`` re-runs the decoder over the whole prefix instead (same tokens, tested).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from .. import validate
from ..errors import DataError, warn
from ..layers.masks import padding_mask_from_ids
from ..progress import progress_bar
from ..tokenizers import Tokenizer, pad_batch

if TYPE_CHECKING:
    from ..models.seq2seq import TransformerSeq2Seq

LENGTH_PENALTY_MAX = 10.0
# the K beams of a batch of sentences each keep their ids and their decoder cache: 64 sentences x 1,000
# beams x a 1,024-token target is 65 M ids, within the 100 M ids ``generate`` allows (MAX_IDS); a beam
# of 100,000 grew past 3 GB in seconds on the smallest model
MAX_BEAM = 1_000


@dataclass(frozen=True)
class DecodeSettings:
    beam: int = 1
    length_penalty: float = 1.0  # finished scores are divided by length**length_penalty
    max_len_a: float = 1.5  # maximum target length = a * source length + b (capped by the model)
    max_len_b: int = 10
    use_cache: bool = True

    def __post_init__(self) -> None:
        validate.flags(self)
        # a NaN or unbounded penalty makes every finished score NaN or -inf: no hypothesis would win, and
        # the translation would come out empty; within +-10, length**penalty stays a finite float64
        validate.integer("beam", self.beam, 1, high=MAX_BEAM)
        validate.number("length_penalty", self.length_penalty, -LENGTH_PENALTY_MAX, LENGTH_PENALTY_MAX)
        validate.number("max_len_a", self.max_len_a, 0)
        validate.integer("max_len_b", self.max_len_b, 0)


class _Decoder:
    """Feeds tokens to the decoder with or without a cache; ``step`` returns log-probs ``(N, V)``."""

    def __init__(
        self, model: TransformerSeq2Seq, memory: Tensor, src_valid: Tensor, max_new: int, use_cache: bool
    ) -> None:
        self.model, self.memory, self.src_valid = model, memory, src_valid
        # the cache holds the target prefix's keys/values and every block's encoder keys/values
        self.cache = model.start_decoding(memory, src_valid, capacity=max_new + 1) if use_cache else None

    def step(self, prefix: Tensor) -> Tensor:
        if self.cache is not None:
            logits = self.model.decode_step(prefix[:, -1:], self.cache)  # (N, V): only the newest token is fed
        else:
            logits = self.model.decode(prefix, self.memory, self.src_valid, last_only=True)[:, -1]
        return torch.log_softmax(logits.float(), dim=-1)

    def reorder(self, index: Tensor, memory: bool = True) -> None:
        """Keep rows ``index``. ``memory=False`` when rows only move among the beams of one sentence: the
        encoder output is the same for all of them, so it stays where it is."""
        if memory:
            self.memory, self.src_valid = self.memory[index], self.src_valid[index]
        if self.cache is not None:
            self.cache.reorder(index, memory=memory)


def _max_new(src_valid: Tensor, settings: DecodeSettings, limit: int) -> int:
    longest = int(src_valid.sum(1).max())
    return max(1, int(min(settings.max_len_a * longest + settings.max_len_b, limit - 1)))  # min first: no int(inf)


@torch.no_grad()
def greedy_decode(
    model: TransformerSeq2Seq, src: Tensor, bos: int, eos: int, settings: DecodeSettings = DecodeSettings()
) -> list[list[int]]:
    """Most likely next token at every step, for a batch ``src (B, S)``; stops at EOS. A sentence that
    has ended leaves the batch, so the last long sentences do not drag the finished ones along."""
    model.eval()
    src_valid = padding_mask_from_ids(src, model.config.pad_id)
    memory = model.encode(src, src_valid)  # (B, S, C)
    max_new = _max_new(src_valid, settings, model.config.max_length)
    dec = _Decoder(model, memory, src_valid, max_new, settings.use_cache)
    prefix = torch.full((len(src), 1), bos, dtype=torch.long, device=src.device)  # (A, 1 + step), A still going
    alive = torch.arange(len(src), device=src.device)  # (A,) the sentence of each row
    out: list[list[int]] = [[] for _ in range(len(src))]
    for _ in range(max_new):
        nxt = dec.step(prefix).argmax(-1)  # (A,)
        prefix = torch.cat([prefix, nxt[:, None]], dim=1)
        ended = nxt == eos
        if bool(ended.any()):
            for row in ended.nonzero().view(-1).tolist():
                out[int(alive[row])] = prefix[row, 1:-1].tolist()
            keep = (~ended).nonzero().view(-1)  # (A',)
            prefix, alive = prefix[keep], alive[keep]
            if len(keep) == 0:
                break
            dec.reorder(keep)
    for row, sentence in enumerate(alive.tolist()):  # out of steps before EOS: all that was decoded
        out[sentence] = prefix[row, 1:].tolist()
    return out


@torch.no_grad()
def beam_search(
    model: TransformerSeq2Seq, src: Tensor, bos: int, eos: int, settings: DecodeSettings = DecodeSettings()
) -> list[list[int]]:
    """Beam search over ``settings.beam`` hypotheses per sentence; the best finished hypothesis by
    ``log p / length**length_penalty``. Beam 1 is exactly greedy decoding.

    Every sentence and every beam moves in one tensor pass per step (no loop over sentences). At each
    step the 2K best extensions of a sentence are ranked; an EOS among the K best finishes that
    hypothesis (at the last step every one of the K best finishes); the first K others carry on. A
    sentence is done once it has K finished hypotheses, or nothing left to extend; its beams then
    leave the batch. Shapes: B sentences, A of them still searched, K beams, V vocabulary.
    """
    model.eval()
    k, b, device = settings.beam, len(src), src.device
    src_valid = padding_mask_from_ids(src, model.config.pad_id)
    memory = model.encode(src, src_valid)  # (B, S, C)
    max_new = _max_new(src_valid, settings, model.config.max_length)
    expand = torch.arange(b, device=device).repeat_interleave(k)  # (B·K,) the sentence of each beam
    dec = _Decoder(model, memory[expand], src_valid[expand], max_new, settings.use_cache)
    prefix = torch.full((b * k, 1), bos, dtype=torch.long, device=device)  # (A·K, 1 + step)
    alive = torch.arange(b, device=device)  # (A,) the sentences still searched, in row order
    scores = torch.full((b, k), float("-inf"), device=device)  # (A, K)
    scores[:, 0] = 0.0  # one live hypothesis at the start
    best = torch.full((b,), float("-inf"), dtype=torch.float64, device=device)  # best finished, normalised
    best_tokens = torch.full((b, max_new), eos, dtype=torch.long, device=device)
    best_length = torch.zeros(b, dtype=torch.long, device=device)
    finished = torch.zeros(b, dtype=torch.long, device=device)  # finished hypotheses so far
    ranks = torch.arange(2 * k, device=device)
    for step in range(max_new):
        a = len(alive)
        logp = dec.step(prefix)  # (A·K, V)
        vocab = logp.shape[-1]
        cand = (scores.view(-1, 1) + logp).view(a, k * vocab)  # (A, K·V)
        top_scores, top_index = cand.topk(2 * k, dim=1)  # (A, 2K): enough to keep K that do not end
        beams, tokens = top_index // vocab, top_index % vocab
        live = top_scores > float("-inf")
        ends = (tokens == eos) | (step == max_new - 1)
        fin = live & ends & (ranks < k)  # only an end among the K best counts, as in standard beam search
        # normalised in float64 by (step + 1)**penalty: every finished hypothesis has step + 1 tokens with EOS
        norm = (top_scores.double() / float(step + 1) ** settings.length_penalty).masked_fill(~fin, float("-inf"))
        step_best, at = norm.max(dim=1)  # the first (lowest rank) on ties
        better = fin.any(dim=1) & (step_best > best[alive])  # strictly better: the earliest hypothesis wins ties
        if better.any():
            rows = better.nonzero().view(-1)
            who, pick = alive[rows], at[rows]
            token = tokens[rows, pick]
            best_tokens[who, :step] = prefix[rows * k + beams[rows, pick], 1:]
            best_tokens[who, step] = token  # EOS stays outside the length below
            best_length[who] = step + (token != eos).long()
            best[who] = step_best[rows]
        finished[alive] += fin.sum(dim=1)
        carry = live & ~ends
        slot = carry.long().cumsum(dim=1) - 1  # (A, 2K): position among the carried ones
        take = carry & (slot < k)
        rows, cols = take.nonzero(as_tuple=True)
        new_scores = torch.full((a, k), float("-inf"), device=device)
        new_rows = (torch.arange(a, device=device)[:, None] * k).expand(a, k).clone()  # (A, K) rows to continue
        new_tokens = torch.full((a, k), eos, dtype=torch.long, device=device)
        new_scores[rows, slot[rows, cols]] = top_scores[rows, cols]
        new_rows[rows, slot[rows, cols]] = rows * k + beams[rows, cols]
        new_tokens[rows, slot[rows, cols]] = tokens[rows, cols]
        going = (finished[alive] < k) & take.any(dim=1)  # (A,)
        if not bool(going.any()):
            break
        all_going = bool(going.all())
        if not all_going:  # done sentences leave the batch
            alive, new_rows, new_tokens = alive[going], new_rows[going], new_tokens[going]
            new_scores = new_scores[going]
        order = new_rows.view(-1)
        prefix = torch.cat([prefix[order], new_tokens.view(-1, 1)], dim=1)
        dec.reorder(order, memory=not all_going)
        scores = new_scores
    lengths, found = best_length.tolist(), (best > float("-inf")).tolist()
    return [best_tokens[i, : lengths[i]].tolist() if found[i] else [] for i in range(b)]


def decode_batch(
    model: TransformerSeq2Seq, src: Tensor, bos: int, eos: int, settings: DecodeSettings
) -> list[list[int]]:
    return (
        greedy_decode(model, src, bos, eos, settings)
        if settings.beam == 1
        else beam_search(model, src, bos, eos, settings)
    )


def encode_source(tokenizer: Tokenizer, text: str, max_length: int) -> list[int]:
    """Source ids ending with EOS, cut to fit the model (``max_length - 1`` ids)."""
    return tokenizer.encode(text, max_length=max_length - 1, add_eos=True)


_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def split_to_fit(tokenizer: Tokenizer, text: str, max_length: int) -> list[str]:
    """``text`` as pieces that each fit the model (``max_length - 1`` ids plus EOS): whole sentences
    packed together while they fit; a single sentence that is still too long is cut at a word."""
    limit = max_length - 1
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text.strip()):
        joined = f"{pieces[-1]} {sentence}" if pieces else sentence
        if pieces and len(tokenizer.encode(joined)) <= limit:
            pieces[-1] = joined
            continue
        words = sentence.split()
        while words:  # a sentence longer than the model: as many words per piece as fit
            n = len(words)
            while n > 1 and len(tokenizer.encode(" ".join(words[:n]))) > limit:
                n = max(1, n * 3 // 4)
            pieces.append(" ".join(words[:n]))
            words = words[n:]
    return pieces


def translate_texts(
    model: TransformerSeq2Seq,
    src_tokenizer: Tokenizer,
    tgt_tokenizer: Tokenizer,
    texts: list[str],
    settings: DecodeSettings = DecodeSettings(),
    batch_size: int = 64,
    progress: bool = False,
) -> list[str]:
    """Translate raw texts (tokenize, decode in batches of similar length, detokenize).

    A text longer than the model's ``max_length`` is translated sentence by sentence (``split_to_fit``)
    and the pieces joined, with a warning; an empty text is an error.
    """
    device = next(model.parameters()).device
    limit = model.config.max_length
    pieces: list[str] = []
    owner: list[int] = []  # which text each piece belongs to
    split = []
    for i, text in enumerate(texts):
        if not text.strip():
            raise DataError(f"text {i + 1} is empty; give a sentence to translate")
        parts = [text] if len(src_tokenizer.encode(text)) < limit else split_to_fit(src_tokenizer, text, limit)
        if len(parts) > 1:
            split.append((i + 1, len(parts)))
        pieces += parts
        owner += [i] * len(parts)
    if split:
        warn(
            f"{len(split)} text(s) are longer than the model's {limit} tokens (first: text {split[0][0]}, "
            f"in {split[0][1]} pieces); each was translated sentence by sentence and the pieces joined"
        )
    order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))  # similar lengths batch well
    done: list[str] = [""] * len(pieces)
    starts = range(0, len(order), batch_size)
    if progress:
        starts = progress_bar(starts, desc="translating", unit="batch", leave=False)
    for start in starts:
        idx = order[start : start + batch_size]
        src, _ = pad_batch([encode_source(src_tokenizer, pieces[i], limit) for i in idx], model.config.pad_id)
        for i, ids in zip(
            idx, decode_batch(model, src.to(device), tgt_tokenizer.need("bos"), tgt_tokenizer.need("eos"), settings)
        ):
            done[i] = tgt_tokenizer.decode(ids)
    out: list[list[str]] = [[] for _ in texts]
    for i, translation in zip(owner, done):
        out[i].append(translation)
    return [" ".join(parts) for parts in out]

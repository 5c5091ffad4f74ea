"""Decoding for the encoder-decoder translator: batched greedy and beam search, with caches.

Shapes: B sentences, K beams, S source length, V target vocabulary. The encoder runs once; each
decoder step feeds only the newest token, with a KV cache for decoder self-attention and the
encoder keys/values of every cross-attention layer computed on the first step and reused.
``use_cache=False`` re-runs the decoder over the whole prefix instead (same tokens, tested).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..errors import DataError, warn
from ..layers.masks import padding_mask_from_ids
from ..tokenizers import Tokenizer, pad_batch


@dataclass(frozen=True)
class DecodeSettings:
    beam: int = 1
    length_penalty: float = 1.0  # finished scores are divided by length**length_penalty
    max_len_a: float = 1.5  # maximum target length = a * source length + b (capped by the model)
    max_len_b: int = 10
    use_cache: bool = True


class _Decoder:
    """Feeds tokens to the decoder with or without a cache; ``step`` returns log-probs ``(N, V)``."""

    def __init__(self, model: nn.Module, memory: Tensor, src_valid: Tensor, max_new: int, use_cache: bool) -> None:
        self.model, self.memory, self.src_valid = model, memory, src_valid
        # the cache holds the target prefix's keys/values and every block's encoder keys/values
        self.cache = model.start_decoding(memory, src_valid, capacity=max_new + 1) if use_cache else None

    def step(self, prefix: Tensor) -> Tensor:
        if self.cache is not None:
            logits = self.model.decode_step(prefix[:, -1:], self.cache)  # (N, V): only the newest token is fed
        else:
            logits = self.model.decode(prefix, self.memory, self.src_valid, last_only=True)[:, -1]
        return torch.log_softmax(logits.float(), dim=-1)

    def reorder(self, index: Tensor) -> None:
        self.memory, self.src_valid = self.memory[index], self.src_valid[index]
        if self.cache is not None:
            self.cache.reorder(index)


def _max_new(src_valid: Tensor, settings: DecodeSettings, limit: int) -> int:
    longest = int(src_valid.sum(1).max())
    return max(1, min(int(settings.max_len_a * longest + settings.max_len_b), limit - 1))


@torch.no_grad()
def greedy_decode(model: nn.Module, src: Tensor, bos: int, eos: int, settings: DecodeSettings = DecodeSettings()
                  ) -> list[list[int]]:
    """Most likely next token at every step, for a batch ``src (B, S)``; stops at EOS."""
    model.eval()
    src_valid = padding_mask_from_ids(src, model.config.pad_id)
    memory = model.encode(src, src_valid)  # (B, S, C)
    max_new = _max_new(src_valid, settings, model.config.max_length)
    dec = _Decoder(model, memory, src_valid, max_new, settings.use_cache)
    prefix = torch.full((len(src), 1), bos, dtype=torch.long, device=src.device)
    done = torch.zeros(len(src), dtype=torch.bool, device=src.device)
    for _ in range(max_new):
        nxt = dec.step(prefix).argmax(-1)  # (B,)
        nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
        prefix = torch.cat([prefix, nxt[:, None]], dim=1)
        done |= nxt == eos
        if done.all():
            break
    return [_strip(row.tolist()[1:], eos) for row in prefix]


def _strip(tokens: list[int], eos: int) -> list[int]:
    return tokens[: tokens.index(eos)] if eos in tokens else tokens


@torch.no_grad()
def beam_search(model: nn.Module, src: Tensor, bos: int, eos: int, settings: DecodeSettings = DecodeSettings()
                ) -> list[list[int]]:
    """Beam search over ``settings.beam`` hypotheses per sentence, batched; best finished hypothesis
    by ``log p / length**length_penalty``. Beam 1 is exactly greedy decoding."""
    model.eval()
    k = settings.beam
    b = len(src)
    src_valid = padding_mask_from_ids(src, model.config.pad_id)
    memory = model.encode(src, src_valid)
    max_new = _max_new(src_valid, settings, model.config.max_length)
    expand = torch.arange(b, device=src.device).repeat_interleave(k)  # (B·K,) sentence of each beam
    dec = _Decoder(model, memory[expand], src_valid[expand], max_new, settings.use_cache)
    prefix = torch.full((b * k, 1), bos, dtype=torch.long, device=src.device)
    scores = torch.full((b, k), float("-inf"), device=src.device)
    scores[:, 0] = 0.0  # one live hypothesis at the start
    finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(b)]
    done = [False] * b
    for step in range(max_new):
        logp = dec.step(prefix)  # (B·K, V)
        vocab = logp.shape[-1]
        cand = (scores.view(-1, 1) + logp).view(b, k * vocab)  # (B, K·V)
        top_scores, top_index = cand.topk(2 * k, dim=1)  # (B, 2K): enough to keep K non-EOS
        new_scores = torch.full((b, k), float("-inf"), device=src.device)
        new_rows = torch.zeros(b, k, dtype=torch.long, device=src.device)
        new_tokens = torch.full((b, k), eos, dtype=torch.long, device=src.device)
        top_scores, top_index = top_scores.tolist(), top_index.tolist()
        for i in range(b):
            if done[i]:
                continue
            kept = 0
            for rank, (score, index) in enumerate(zip(top_scores[i], top_index[i])):
                beam, token = divmod(index, vocab)
                if score == float("-inf"):
                    break
                if token == eos or step == max_new - 1:
                    if rank < k:  # only EOS among the K best counts, as in standard beam search
                        hyp = prefix[i * k + beam, 1:].tolist() + ([] if token == eos else [token])
                        finished[i].append((score / max(len(hyp) + (token == eos), 1) ** settings.length_penalty,
                                            hyp))
                    continue
                new_scores[i, kept], new_rows[i, kept], new_tokens[i, kept] = score, i * k + beam, token
                kept += 1
                if kept == k:
                    break
            if len(finished[i]) >= k or kept == 0:
                done[i] = True
        if all(done):
            break
        rows = new_rows.view(-1)
        prefix = torch.cat([prefix[rows], new_tokens.view(-1, 1)], dim=1)
        dec.reorder(rows)
        scores = new_scores.masked_fill(torch.tensor(done, device=src.device)[:, None], float("-inf"))
    return [max(f, key=lambda x: x[0])[1] if f else [] for f in finished]


def decode_batch(model: nn.Module, src: Tensor, bos: int, eos: int, settings: DecodeSettings) -> list[list[int]]:
    return greedy_decode(model, src, bos, eos, settings) if settings.beam == 1 else \
        beam_search(model, src, bos, eos, settings)


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


def translate_texts(model: nn.Module, src_tokenizer: Tokenizer, tgt_tokenizer: Tokenizer, texts: list[str],
                    settings: DecodeSettings = DecodeSettings(), batch_size: int = 64) -> list[str]:
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
        warn(f"{len(split)} text(s) are longer than the model's {limit} tokens (first: text {split[0][0]}, "
             f"in {split[0][1]} pieces); each was translated sentence by sentence and the pieces joined")
    order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))  # similar lengths batch well
    done: list[str] = [""] * len(pieces)
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        src, _ = pad_batch([encode_source(src_tokenizer, pieces[i], limit) for i in idx], model.config.pad_id)
        for i, ids in zip(idx, decode_batch(model, src.to(device), tgt_tokenizer.bos_id, tgt_tokenizer.eos_id,
                                            settings)):
            done[i] = tgt_tokenizer.decode(ids)
    out: list[list[str]] = [[] for _ in texts]
    for i, translation in zip(owner, done):
        out[i].append(translation)
    return [" ".join(parts) for parts in out]

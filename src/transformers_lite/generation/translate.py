"""Decoding for the encoder-decoder translator: batched greedy and beam search, with caches.

Shapes: B sentences, K beams, S source length, V target vocabulary. The encoder runs once; each
decoder step feeds only the newest token, with a KV cache for decoder self-attention and the
encoder keys/values of every cross-attention layer computed on the first step and reused.
``use_cache=False`` re-runs the decoder over the whole prefix instead (same tokens, tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class DecodeSettings:
    beam: int = 1
    length_penalty: float = 1.0  # finished scores are divided by length**length_penalty
    max_len_a: float = 1.5  # maximum target length = a * source length + b (capped by the model)
    max_len_b: int = 10
    use_cache: bool = True


class _Decoder:
    """Feeds tokens to the decoder with or without caches; ``step`` returns log-probs ``(N, V)``."""

    def __init__(self, model: nn.Module, memory: Tensor, src_valid: Tensor, max_new: int, use_cache: bool) -> None:
        self.model, self.memory, self.src_valid, self.use_cache = model, memory, src_valid, use_cache
        # self-attention caches hold the target prefix; cross-attention caches the encoder keys/values
        self.cache = model.new_cache(memory.shape[0], capacity=max_new + 1) if use_cache else None

    def step(self, prefix: Tensor) -> Tensor:
        if self.use_cache:
            logits = self.model.decode(prefix[:, -1:], self.memory, self.src_valid, cache=self.cache, last_only=True)
        else:
            logits = self.model.decode(prefix, self.memory, self.src_valid, last_only=True)
        return torch.log_softmax(logits[:, -1].float(), dim=-1)

    def reorder(self, index: Tensor) -> None:
        self.memory, self.src_valid = self.memory[index], self.src_valid[index]
        if self.cache is not None:
            for c in self.cache[0] + self.cache[1]:
                c.reorder(index)


def _max_new(src_valid: Tensor, settings: DecodeSettings, limit: int) -> int:
    longest = int(src_valid.sum(1).max())
    return max(1, min(int(settings.max_len_a * longest + settings.max_len_b), limit - 1))


@torch.no_grad()
def greedy_decode(model: nn.Module, src: Tensor, bos: int, eos: int, settings: DecodeSettings = DecodeSettings()
                  ) -> list[list[int]]:
    """Most likely next token at every step, for a batch ``src (B, S)``; stops at EOS."""
    model.eval()
    src_valid = src != model.config.pad_id
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
    src_valid = src != model.config.pad_id
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


def translate_texts(run, texts: list[str], settings: DecodeSettings = DecodeSettings(),  # noqa: ANN001
                    batch_size: int = 64) -> list[str]:
    """Translate raw sentences with a loaded seq2seq run (tokenize, decode, detokenize)."""
    from ..tokenizers.index import pad_batch

    src_tok, tgt_tok = run.tokenizers["src_tokenizer"], run.tokenizers["tgt_tokenizer"]
    device = next(run.model.parameters()).device
    limit = run.config.max_length
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths batch well
    out: list[str] = [""] * len(texts)
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        rows = [encode_source(src_tok, texts[i], limit) for i in idx]
        src, _ = pad_batch(rows, run.config.pad_id)
        for i, ids in zip(idx, decode_batch(run.model, src.to(device), tgt_tok.bos_id, tgt_tok.eos_id, settings)):
            out[i] = detokenize(tgt_tok, ids)
    return out


def encode_source(tokenizer, text: str, limit: int) -> list[int]:  # noqa: ANN001
    from ..data.translation import word_tokenize

    if getattr(tokenizer, "kind", "") == "bpe":
        return tokenizer.encode(text, limit - 1, add_eos=True)
    return tokenizer.encode(word_tokenize(text), limit - 1, add_eos=True)


def detokenize(tokenizer, ids: list[int]) -> str:  # noqa: ANN001
    if getattr(tokenizer, "kind", "") == "bpe":
        return tokenizer.decode(ids)
    import re

    text = " ".join(tokenizer.decode(ids, skip_special=True))
    return re.sub(r" ([.,!?;:])", r"\1", text)


def inspect_cross_attention(run, src: str | None, tgt: str | None, block: int, head: int, out):  # noqa: ANN001, ANN201
    """Write the cross-attention heatmap (target tokens x source tokens) of one block and head."""
    from ..inspect import plots, scores

    if not src:
        raise ValueError("give the source sentence with --src")
    src_tok, tgt_tok = run.tokenizers["src_tokenizer"], run.tokenizers["tgt_tokenizer"]
    model = run.model.cpu()
    src_ids = torch.tensor(encode_source(src_tok, src, run.config.max_length))
    if tgt:
        tgt_ids = encode_source(tgt_tok, tgt, run.config.max_length)[:-1]  # without EOS
    else:
        tgt_ids = greedy_decode(model, src_ids[None], tgt_tok.bos_id, tgt_tok.eos_id)[0]
    tgt_in = torch.tensor([tgt_tok.bos_id] + tgt_ids)
    weights = scores.cross_attention(model, src_ids, tgt_in, block, head)  # (T, S)
    names = lambda tok, ids: [_token_text(tok, i) for i in ids]  # noqa: E731
    return [plots.heatmap(weights, names(tgt_tok, tgt_in.tolist()), names(src_tok, src_ids.tolist()),
                          out / f"cross_attention_block{block}_head{head}.png",
                          f"cross-attention, block {block}, head {head}", xlabel="source", ylabel="target (input)")]


def _token_text(tokenizer, i: int) -> str:  # noqa: ANN001
    if getattr(tokenizer, "kind", "") == "bpe":
        return tokenizer.token(i)
    return tokenizer.vocabulary[i]

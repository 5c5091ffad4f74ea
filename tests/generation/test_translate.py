import pytest
import torch
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st
from torch import Tensor, nn

from transformers_lite import Seq2SeqConfig, build_model
from transformers_lite.evaluation.translation import corpus_scores
from transformers_lite.generation.translate import (
    MAX_BEAM,
    DecodeSettings,
    _Decoder,
    _max_new,
    beam_search,
    decode_batch,
    greedy_decode,
)
from transformers_lite.layers.masks import padding_mask_from_ids

CFG = Seq2SeqConfig(
    src_vocab_size=20,
    tgt_vocab_size=20,
    dim=16,
    n_heads=2,
    dim_hidden=32,
    n_encoder_blocks=2,
    n_decoder_blocks=2,
    dropout=0.0,
    max_length=24,
    pad_id=1,
)
BOS, EOS = 2, 3


@pytest.fixture
def model():
    torch.manual_seed(0)
    m = build_model(CFG).eval()
    with torch.no_grad():  # make EOS unlikely so decoding runs for a while
        m.head.bias[EOS] = -2.0
    return m


SRC = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, 1, 1], [11, 3, 1, 1, 1]])


def test_beam_one_equals_greedy(model):
    assert beam_search(model, SRC, BOS, EOS, DecodeSettings(beam=1)) == greedy_decode(model, SRC, BOS, EOS)


@pytest.mark.parametrize("beam", [1, 3])
def test_cache_equals_no_cache(model, beam):
    cached = beam_search(model, SRC, BOS, EOS, DecodeSettings(beam=beam, use_cache=True))
    uncached = beam_search(model, SRC, BOS, EOS, DecodeSettings(beam=beam, use_cache=False))
    assert cached == uncached
    assert greedy_decode(model, SRC, BOS, EOS, DecodeSettings(use_cache=False)) == greedy_decode(model, SRC, BOS, EOS)


def test_beam_finds_at_least_the_greedy_score(model):
    def logp(src_row, tokens):
        src = src_row[None]
        tgt = torch.tensor([[BOS] + tokens])
        out = torch.log_softmax(model(src, tgt), -1)[0]
        return float(sum(out[i, t] for i, t in enumerate(tokens + [EOS])))

    settings = DecodeSettings(beam=4, length_penalty=0.0, max_len_a=0, max_len_b=8)
    greedy = greedy_decode(model, SRC, BOS, EOS, settings)
    beams = beam_search(model, SRC, BOS, EOS, settings)
    for row, g, b in zip(SRC, greedy, beams):
        if len(g) < 7 and len(b) < 7:  # both finished with EOS inside the length limit
            assert logp(row, b) >= logp(row, g) - 1e-6


@pytest.mark.parametrize("eos_bias, cap", [(-2.0, 10), (0.5, 10), (-0.5, 3)])
@pytest.mark.parametrize("beam", [1, 3])
def test_batched_decoding_equals_one_at_a_time(model, eos_bias, cap, beam):
    """Sentences leave the batch as they end (early, late, or at the length cap): each still gets what it
    gets alone."""
    with torch.no_grad():
        model.head.bias[EOS] = eos_bias
    fixed = DecodeSettings(beam=beam, max_len_a=0, max_len_b=cap)  # else the cap follows the longest source
    together = decode_batch(model, SRC, BOS, EOS, fixed)  # greedy_decode for beam 1
    alone = [decode_batch(model, row[row != 1][None], BOS, EOS, fixed)[0] for row in SRC]
    assert together == alone
    assert max(len(t) for t in together) <= cap


def test_bleu_of_a_perfect_output_is_100():
    refs = ["A man rides a bike.", "Two dogs play in the snow."]
    assert corpus_scores(refs, refs)["bleu"] == pytest.approx(100.0)
    assert corpus_scores(["Cats sleep."] * 2, refs)["bleu"] < 10


@torch.no_grad()
def reference_beam_search(
    model: nn.Module, src: Tensor, bos: int, eos: int, settings: DecodeSettings = DecodeSettings()
) -> list[list[int]]:
    """The first release's beam search (a Python loop over sentences and candidates): the reference
    the batched one must equal."""
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
                        finished[i].append((score / max(len(hyp) + (token == eos), 1) ** settings.length_penalty, hyp))
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


@pytest.mark.parametrize("beam, penalty, eos_bias", [(2, 1.0, -2.0), (3, 0.6, -2.0), (4, 1.0, 0.0), (5, 0.0, 1.0)])
def test_batched_beam_search_equals_the_reference(beam, penalty, eos_bias):
    torch.manual_seed(beam)
    m = build_model(CFG).eval()
    with torch.no_grad():
        m.head.bias[EOS] = eos_bias  # from "rarely ends" to "often ends early"
    src = torch.randint(4, 20, (6, 7))
    src[2, 3:] = 1  # padding
    src[:, -1] = EOS
    for settings in (
        DecodeSettings(beam=beam, length_penalty=penalty),
        DecodeSettings(beam=beam, length_penalty=penalty, max_len_a=0, max_len_b=3, use_cache=False),
    ):
        assert beam_search(m, src, BOS, EOS, settings) == reference_beam_search(m, src, BOS, EOS, settings)


@examples(max_examples=60, deadline=None)
@given(beam=st.integers(-(2**40), 2**40) | st.integers(MAX_BEAM - 2, MAX_BEAM + 2))
def test_a_beam_is_taken_exactly_within_its_bound(beam):
    """Every beam keeps its ids and its decoder cache: a beam from 1 to ``MAX_BEAM`` is taken, any other is
    refused naming the bound (a beam of 100,000 once grew past 3 GB in seconds)."""
    if 1 <= beam <= MAX_BEAM:
        assert DecodeSettings(beam=beam).beam == beam
    else:
        with pytest.raises(ValueError, match=rf"beam must be an integer in \[1, {MAX_BEAM}\], got {beam}"):
            DecodeSettings(beam=beam)

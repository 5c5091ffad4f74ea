import pytest
import torch

from transformers_lite import Seq2SeqConfig, build_model
from transformers_lite.evaluation.translation import corpus_scores
from transformers_lite.generation.translate import DecodeSettings, beam_search, greedy_decode

CFG = Seq2SeqConfig(src_vocab_size=20, tgt_vocab_size=20, dim=16, n_heads=2, dim_hidden=32, n_encoder_blocks=2,
                    n_decoder_blocks=2, dropout=0.0, max_length=24, pad_id=1)
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


def test_batched_decoding_equals_one_at_a_time(model):
    fixed = DecodeSettings(max_len_a=0, max_len_b=10)  # the length cap would otherwise follow the longest source
    together = greedy_decode(model, SRC, BOS, EOS, fixed)
    alone = [greedy_decode(model, row[row != 1][None], BOS, EOS, fixed)[0] for row in SRC]
    assert together == alone


def test_bleu_of_a_perfect_output_is_100():
    refs = ["A man rides a bike.", "Two dogs play in the snow."]
    assert corpus_scores(refs, refs)["bleu"] == pytest.approx(100.0)
    assert corpus_scores(["Cats sleep."] * 2, refs)["bleu"] < 10

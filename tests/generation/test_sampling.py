"""Sampling and decoding settings: any number either gives valid tokens or a ``ValueError`` naming the
setting; never NaN probabilities, an internal error, or a silently different meaning."""

import math
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite import GeneratorConfig, Seq2SeqConfig, build_model
from transformers_lite.generation.generate import generate_tokens
from transformers_lite.generation.sampling import check_sampling, filter_logits, sample_next, scale
from transformers_lite.generation.translate import DecodeSettings, beam_search, greedy_decode

GEN = GeneratorConfig(vocab_size=12, max_length=8, dim=16, n_heads=2, dim_hidden=32, n_blocks=1, dropout=0.0)
S2S = Seq2SeqConfig(
    src_vocab_size=20,
    tgt_vocab_size=20,
    dim=16,
    n_heads=2,
    dim_hidden=32,
    n_encoder_blocks=1,
    n_decoder_blocks=1,
    dropout=0.0,
    max_length=12,
    pad_id=1,
)
ANY_FLOAT = st.one_of(
    st.floats(),  # nan, inf, -inf, huge, tiny, negative
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1e-300, 5e-324, 1e-45, 1e-30, 1e300, -1e-300]),
)
TINY = [1e-300, 5e-324, 1e-45, 1e-38, 1e-30]


def _model(config):
    torch.manual_seed(0)
    return build_model(config).eval()


@given(
    st.lists(st.floats(-1e4, 1e4), min_size=2, max_size=9).map(lambda v: torch.tensor([v])),
    ANY_FLOAT,
    st.one_of(st.none(), ANY_FLOAT),
    st.one_of(st.none(), st.integers(-2, 12)),
)
def test_probabilities_are_finite_for_every_accepted_setting(logits, temperature, top_p, top_k):
    try:
        check_sampling(temperature, top_k, top_p)
    except ValueError as err:
        assert str(err).split(" must be ")[0] in {"temperature", "top_p", "top_k"}
        return
    if temperature == 0:
        return  # greedy: no probabilities
    probs = torch.softmax(filter_logits(scale(logits, temperature), top_k, top_p), dim=-1)
    assert torch.isfinite(probs).all() and abs(float(probs.sum()) - 1) < 1e-4
    token = int(sample_next(logits, temperature, top_k, top_p, random.Random(0)))
    assert 0 <= token < logits.shape[-1] and probs[0, token] > 0


def test_a_tiny_temperature_is_the_argmax():
    logits = torch.tensor([[0.5, 3.0, 2.9999, -1.0], [7.0, -7.0, 6.0, 0.0]])
    for temperature in TINY:
        for seed in range(5):
            assert sample_next(logits, temperature, generator=random.Random(seed)).tolist() == [1, 0]


@pytest.mark.parametrize("temperature", TINY)
def test_a_tiny_temperature_generates_the_greedy_text(temperature):
    model, prompt = _model(GEN), torch.tensor([1, 2, 3])
    greedy = list(generate_tokens(model, prompt, 20, temperature=0.0))
    assert list(generate_tokens(model, prompt, 20, temperature=temperature, seed=3)) == greedy


@settings(max_examples=30)
@given(ANY_FLOAT, st.one_of(st.none(), ANY_FLOAT), st.one_of(st.integers(-(2**40), 2**40), st.none()))
def test_generation_gives_tokens_or_names_the_setting(temperature, top_p, seed):
    model = _model(GEN)
    try:
        out = list(generate_tokens(model, torch.tensor([1, 2]), 6, temperature=temperature, top_p=top_p, seed=seed))
    except ValueError as err:
        assert str(err).split(" must be ")[0] in {"temperature", "top_p", "seed"}
        return
    assert len(out) == 6 and all(0 <= t < GEN.vocab_size for t in out)
    assert seed is None or 0 <= seed <= 2**32 - 1


def test_a_negative_seed_is_refused_not_taken_as_its_absolute_value():
    model = _model(GEN)
    with pytest.raises(ValueError, match="seed must be an integer in \\[0, 4294967295\\], got -5"):
        list(generate_tokens(model, torch.tensor([1]), 3, seed=-5))
    with pytest.raises(ValueError, match="max_new_tokens must be an integer in \\[0, 1000000\\], got -1"):
        list(generate_tokens(model, torch.tensor([1]), -1))


@settings(max_examples=25)
@given(ANY_FLOAT, st.integers(1, 3))
def test_beam_search_translates_or_names_the_length_penalty(penalty, beam):
    model, src = _model(S2S), torch.tensor([[5, 6, 7, 3], [9, 3, 1, 1]])
    try:
        settings_ = DecodeSettings(beam=beam, length_penalty=penalty)
    except ValueError as err:
        assert str(err).startswith("length_penalty must be a number in [-10, 10], got ")
        assert not (math.isfinite(penalty) and abs(penalty) <= 10)
        return
    out = beam_search(model, src, 2, 3, settings_)
    assert len(out) == 2 and all(0 <= t < S2S.tgt_vocab_size for row in out for t in row)
    if beam == 1:
        assert out == greedy_decode(model, src, 2, 3)  # a penalty changes nothing with one beam


def test_decode_settings_name_what_is_wrong():
    for kwargs, message in [
        (dict(beam=0), "beam must be an integer in [1, 1000], got 0"),
        (dict(length_penalty=math.nan), "length_penalty must be a number in [-10, 10], got nan"),
        (dict(max_len_a=math.inf), "max_len_a must be a finite number >= 0, got inf"),
        (dict(max_len_b=-1), "max_len_b must be an integer >= 0, got -1"),
    ]:
        with pytest.raises(ValueError) as err:
            DecodeSettings(**kwargs)
        assert str(err.value) == message

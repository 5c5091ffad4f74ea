import random

import pytest
import torch

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.generation.generate import generate_tokens, window_start
from transformers_lite.generation.sampling import filter_logits, sample_next

CFG = GeneratorConfig(vocab_size=12, max_length=8, dim=16, n_heads=2, dim_hidden=32, n_blocks=2, dropout=0.0)


@pytest.fixture
def model():
    torch.manual_seed(0)
    return build_model(CFG).eval()


def test_budget_is_respected_and_seed_is_deterministic(model):
    prompt = torch.tensor([1, 2, 3])
    a = list(generate_tokens(model, prompt, 30, seed=4))
    b = list(generate_tokens(model, prompt, 30, seed=4))
    c = list(generate_tokens(model, prompt, 30, seed=5))
    assert len(a) == 30 and a == b and a != c
    assert list(generate_tokens(model, prompt, 0)) == []


@pytest.mark.parametrize("stride", [1, 3, 8])
def test_cache_equals_no_cache_beyond_the_context(model, stride):
    prompt = torch.tensor([1, 2])
    for temperature, top_k, top_p in ((1.0, None, None), (0.8, 5, 0.9), (0.0, None, None)):
        kw = dict(temperature=temperature, top_k=top_k, top_p=top_p, seed=2, stride=stride)
        cached = list(generate_tokens(model, prompt, 40, use_cache=True, **kw))
        uncached = list(generate_tokens(model, prompt, 40, use_cache=False, **kw))
        assert cached == uncached  # 40 tokens: far beyond the context of 8


def test_greedy_matches_argmax_of_the_window(model):
    prompt = torch.tensor([3, 1, 4, 1, 5])
    out = list(generate_tokens(model, prompt, 12, temperature=0.0, stride=1))
    tokens = prompt.tolist()
    for nxt in out:
        window = torch.tensor([tokens[-CFG.max_length :]])
        assert nxt == int(model(window)[0, -1].argmax())
        tokens.append(nxt)


def test_sliding_window_lengths():
    lengths = [n - window_start(n, 8, 3) for n in range(1, 16)]
    assert lengths == [1, 2, 3, 4, 5, 6, 7, 8, 6, 7, 8, 6, 7, 8, 6]
    assert all(n - window_start(n, 8, 1) == min(n, 8) for n in range(1, 30))


def test_top_k_and_top_p_filtering():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    assert torch.isinf(filter_logits(logits, top_k=2)[0, 2:]).all()
    kept = ~torch.isinf(filter_logits(logits, top_p=0.7))
    assert kept.tolist() == [[True, True, False, False]]  # 0.5 < 0.7, 0.5 + 0.3 >= 0.7
    gen = random.Random(0)
    draws = {int(sample_next(logits, 1.0, top_k=2, generator=gen)) for _ in range(200)}
    assert draws == {0, 1}
    assert int(sample_next(logits, 0.0)) == 0
    with pytest.raises(ValueError, match="temperature"):
        sample_next(logits, -1.0)

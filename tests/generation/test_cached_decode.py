import pytest
import torch

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.generation.generate import generate
from transformers_lite.layers import KVCache

VARIANTS = {
    "post-gpt": dict(),
    "pre-norm-gelu-tied": dict(norm_first=True, final_norm=True, activation="gelu", tie_embeddings=True),
    "rope-bias": dict(position="rope", qkv_bias=True, norm_first=True),
}


def model(**kw):
    torch.manual_seed(0)
    cfg = GeneratorConfig(vocab_size=11, max_length=12, dim=16, n_heads=2, dim_hidden=32, n_blocks=2, dropout=0.1, **kw)
    return build_model(cfg).eval()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_cached_logits_equal_the_full_forward(variant):
    m = model(**VARIANTS[variant])
    ids = torch.randint(0, 11, (3, 12))
    full = m(ids)  # (B, T, V): every position at once, no cache
    cache = m.new_cache(3)

    def step(chunk):
        return m(chunk, cache=cache, last_only=True)[:, -1]

    steps = [step(ids[:, :5])]  # a 5-token prefill, a 3-token chunk after the cache, then one at a time
    steps.append(step(ids[:, 5:8]))
    steps += [step(ids[:, i : i + 1]) for i in range(8, 12)]
    expected = full[:, [4, 7, 8, 9, 10, 11]]
    assert torch.allclose(torch.stack(steps, 1), expected, atol=1e-5)
    assert cache.length == 12
    with pytest.raises(ValueError, match="exceeds the context length 12"):
        step(ids[:, :1])


@pytest.mark.parametrize("stride", [1, 4, 12])
def test_all_paths_sample_the_same_tokens_beyond_the_context(stride):
    m = model(norm_first=True, final_norm=True)
    prompt = torch.tensor([1, 2, 3])
    for temperature, top_k, top_p in ((1.0, None, None), (0.8, 4, 0.9), (0.0, None, None)):
        kw = dict(temperature=temperature, top_k=top_k, top_p=top_p, seed=5, stride=stride)
        runs = {path: list(generate(m, prompt, 40, path=path, **kw)) for path in ("cache", "no-cache")}
        assert runs["cache"] == runs["no-cache"]


def test_sample_i_of_a_batch_is_the_unbatched_run_with_seed_plus_i():
    m = model()
    prompt = torch.tensor([4, 2])
    batch = [list(column) for column in zip(*generate(m, prompt, 30, num_samples=4, seed=7))]
    alone = [[row[0] for row in generate(m, prompt, 30, seed=7 + i)] for i in range(4)]
    assert batch == alone and len({tuple(b) for b in batch}) > 1  # distinct samples


def test_the_cache_is_allocated_once_per_generation(monkeypatch):
    m = model()
    made = []
    real = KVCache.__init__

    def counting(self, *args, **kwargs):
        made.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(KVCache, "__init__", counting)
    list(generate(m, torch.tensor([1]), 50, stride=3))  # the window restarts many times
    assert len(made) == 1

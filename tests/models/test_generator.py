import pytest
import torch

from transformers_lite import GeneratorConfig, build_model, count_parameters, get_preset


def test_post_gpt_parameter_count_is_exact():
    assert count_parameters(build_model(get_preset("post-gpt-original").model)) == (44_487, 0)


def test_shapes_and_last_only():
    model = build_model(get_preset("post-gpt-original").model).eval()
    ids = torch.randint(0, 71, (3, 20))
    assert model(ids).shape == (3, 20, 71)
    assert model(ids[0]).shape == (1, 20, 71)
    last = model(ids, last_only=True)
    assert last.shape == (3, 1, 71)
    assert torch.allclose(last[:, 0], model(ids)[:, -1], atol=1e-6)


@pytest.mark.parametrize("position", ["learned", "rope"])
def test_causal_no_leak(position):
    model = build_model(GeneratorConfig(vocab_size=20, max_length=16, position=position, dropout=0.0)).eval()
    ids = torch.randint(0, 20, (2, 16))
    changed = ids.clone()
    changed[:, 9:] = torch.randint(0, 20, (2, 7))
    a, b = model(ids), model(changed)
    assert torch.allclose(a[:, :9], b[:, :9], atol=1e-6)
    assert not torch.allclose(a[:, 9:], b[:, 9:])


@pytest.mark.parametrize("norm_first", [False, True])
def test_kv_cache_logits_equal_full_forward(norm_first):
    model = build_model(
        GeneratorConfig(vocab_size=20, max_length=16, norm_first=norm_first, final_norm=norm_first, dropout=0.0)
    ).eval()
    ids = torch.randint(0, 20, (2, 12))
    full = model(ids)
    cache = model.new_cache(2)
    pieces = [model(ids[:, :5], cache=cache)]
    for i in range(5, 12):
        pieces.append(model(ids[:, i : i + 1], cache=cache))
    assert torch.allclose(torch.cat(pieces, 1), full, atol=1e-5)


def test_context_limit_error_and_weight_tying():
    model = build_model(GeneratorConfig(vocab_size=20, max_length=8, tie_embeddings=True))
    with pytest.raises(ValueError, match="exceeds the context length 8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    assert model.head.weight is model.embedding.weight
    untied = build_model(GeneratorConfig(vocab_size=20, max_length=8))
    assert count_parameters(untied)[0] - count_parameters(model)[0] == 20 * 32


def test_seeded_construction_and_training_step_are_deterministic():
    def run():
        torch.manual_seed(123)
        model = build_model(get_preset("post-gpt-original").model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        ids = torch.randint(0, 71, (4, 64))
        loss = torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
        loss.backward()
        opt.step()
        return loss.item(), model.head.weight.detach().clone()

    (l1, w1), (l2, w2) = run(), run()
    assert l1 == l2 and torch.equal(w1, w2)


def test_without_the_causal_mask_positions_see_the_future_and_generation_still_runs():
    from transformers_lite.generation.generate import generate_tokens

    cfg = GeneratorConfig(vocab_size=12, max_length=8, dim=16, n_heads=2, dim_hidden=32, n_blocks=1, dropout=0.0)
    torch.manual_seed(0)
    causal = build_model(cfg).eval()
    open_ = build_model(cfg.replace(causal=False)).eval()
    open_.load_state_dict(causal.state_dict())
    a, b = torch.tensor([[1, 2, 3, 4]]), torch.tensor([[1, 2, 3, 9]])
    assert torch.equal(causal(a)[0, 0], causal(b)[0, 0])  # position 0 cannot see position 3
    assert not torch.allclose(open_(a)[0, 0], open_(b)[0, 0])  # without the mask it can: the teaching experiment
    out = list(generate_tokens(open_, torch.tensor([1, 2]), 10, seed=0))
    assert len(out) == 10 and all(0 <= i < 12 for i in out)

import pytest
import torch

from transformers_lite import ClassifierConfig, build_model, count_parameters, get_preset


def test_seed_classifier_parameter_count_is_exact():
    model = build_model(get_preset("seed-classifier"))
    assert count_parameters(model) == (251_552, 32_000)
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == 251_552


def test_shapes_for_one_sample_and_a_batch():
    model = build_model(get_preset("seed-classifier")).eval()
    ids = torch.randint(0, 7455, (50,))
    assert model(ids).shape == (1, 5)
    assert model(torch.randint(0, 7455, (8, 50))).shape == (8, 5)


def test_mean_pooling_classifier_is_invariant_to_padding():
    cfg = ClassifierConfig(vocab_size=30, head="mean", max_length=12, pad_id=0, dropout=0.0)
    model = build_model(cfg).eval()
    ids = torch.tensor([[5, 6, 7, 8]])
    padded = torch.tensor([[5, 6, 7, 8, 0, 0, 0, 0, 0]])
    assert torch.allclose(model(ids), model(padded), atol=1e-5)
    # a batch where the other row is longer gives the same answer for this row
    batch = torch.tensor([[5, 6, 7, 8, 0, 0], [1, 2, 3, 4, 5, 6]])
    assert torch.allclose(model(batch)[0], model(ids)[0], atol=1e-5)


def test_errors_for_too_long_input_and_bad_mask():
    model = build_model(ClassifierConfig(vocab_size=30, head="mean", max_length=4))
    with pytest.raises(ValueError, match="exceeds max_length=4"):
        model(torch.zeros(1, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="does not match"):
        model(torch.zeros(2, 3, dtype=torch.long), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="token id 30"):
        model(torch.tensor([[30]]))


def test_attention_weights_can_be_recorded():
    from transformers_lite.inspect.scores import classifier_attention

    model = build_model(ClassifierConfig(vocab_size=30, head="mean", max_length=6, pad_id=0, n_blocks=2)).eval()
    weights = classifier_attention(model, torch.tensor([3, 4, 5, 0]))
    assert len(weights) == 2 and weights[0].shape == (4, 4, 4)
    assert torch.allclose(weights[0][..., :3].sum(-1), torch.ones(4, 4))
    assert (weights[0][..., 3] == 0).all()  # the padding key gets no attention
    assert all(m.weights is None for m in model.modules() if hasattr(m, "record_weights"))  # nothing kept after

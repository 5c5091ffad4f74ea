import pytest
import torch

from transformers_lite import ClassifierConfig, build_model
from transformers_lite.models import ClassifierEnsemble, TransformerClassifier
from transformers_lite.models.ensemble import classifier_members


def _config(**changes) -> ClassifierConfig:
    base = ClassifierConfig(vocab_size=30, head="mean", max_length=12, pad_id=0, dropout=0.0)
    return base.replace(**changes)


def test_members_build_an_ensemble_of_independent_classifiers():
    model = build_model(_config(members=3))
    assert isinstance(model, ClassifierEnsemble) and len(model.members) == 3
    assert all(isinstance(m, TransformerClassifier) and m.config.members == 1 for m in model.members)
    one = sum(p.numel() for p in model.members[0].parameters())
    assert sum(p.numel() for p in model.parameters()) == 3 * one  # nothing shared
    assert not torch.equal(model.members[0].encoder.embedding.weight, model.members[1].encoder.embedding.weight)
    assert classifier_members(model) == list(model.members)
    single = build_model(_config())
    assert isinstance(single, TransformerClassifier) and classifier_members(single) == [single]


def test_the_ensemble_predicts_the_mean_probability_of_its_members():
    torch.manual_seed(0)
    model = build_model(_config(members=3)).eval()
    ids = torch.tensor([[5, 6, 7, 8, 0, 0], [1, 2, 3, 4, 5, 6]])
    probs = torch.stack([torch.softmax(m(ids), -1) for m in model.members]).mean(0)  # (B, K)
    assert torch.allclose(torch.softmax(model(ids), -1), probs, atol=1e-6)
    assert torch.allclose(torch.logsumexp(model(ids), -1), torch.zeros(2), atol=1e-6)  # already normalised


def test_a_single_logit_ensemble_averages_the_sigmoids():
    torch.manual_seed(0)
    model = build_model(_config(members=2, n_labels=1)).eval()
    ids = torch.tensor([[5, 6, 7]])
    mean = torch.stack([torch.sigmoid(m(ids)) for m in model.members]).mean(0)  # (B, 1)
    assert torch.allclose(torch.sigmoid(model(ids)), mean, atol=1e-6)
    assert model(ids).shape == (1, 1)


def test_bigram_vectors_change_a_trained_model_and_keep_padding_invisible():
    torch.manual_seed(0)
    model = build_model(_config(bigram_buckets=64)).eval()
    ids = torch.tensor([[5, 6, 7, 8]])
    before = model(ids)
    with torch.no_grad():  # a zero table (as built) leaves the model as it was without one
        plain = TransformerClassifier(_config())
        plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("bigram")})
        assert torch.allclose(plain.eval()(ids), before, atol=1e-6)
        model.bigram_embedding.weight.normal_()
    assert not torch.allclose(model(ids), before)
    padded = torch.tensor([[5, 6, 7, 8, 0, 0, 0]])
    assert torch.allclose(model(ids), model(padded), atol=1e-5)


@pytest.mark.parametrize("field, value", [("members", 0), ("bigram_buckets", -1), ("members", 1.5)])
def test_bad_ensemble_settings_are_named(field, value):
    with pytest.raises(ValueError, match=field):
        _config(**{field: value})


def test_an_ensemble_of_one_is_refused_by_the_class():
    with pytest.raises(ValueError, match="members >= 2"):
        ClassifierEnsemble(_config())

import pytest
import torch

from transformers_lite import ClassifierConfig, build_model, count_parameters, get_preset


def test_post_classifier_parameter_count_is_exact():
    model = build_model(get_preset("post-classifier").model)
    assert count_parameters(model) == (251_552, 32_000)
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == 251_552


def test_shapes_for_one_sample_and_a_batch():
    model = build_model(get_preset("post-classifier").model).eval()
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


def test_input_dropout_changes_training_outputs_only_and_adds_no_parameters():
    cfg = ClassifierConfig(vocab_size=20, max_length=6, dim=8, n_heads=2, dim_hidden=16, dropout=0.0)
    plain, seed003 = build_model(cfg), build_model(cfg.replace(input_dropout=0.5))
    assert sum(p.numel() for p in plain.parameters()) == sum(p.numel() for p in seed003.parameters())
    seed003.load_state_dict(plain.state_dict())
    ids = torch.randint(0, 20, (3, 6))
    seed003.train()
    assert not torch.equal(seed003(ids), seed003(ids))  # a new dropout mask each call
    seed003.eval()
    plain.eval()
    assert torch.equal(seed003(ids), plain(ids))


def test_seed_000_without_qkv_bias_has_its_first_printouts_parameter_count():
    from transformers_lite import count_parameters, get_preset

    assert count_parameters(build_model(get_preset("post-classifier").model.replace(qkv_bias=False)))[0] == 251_456


def test_padding_with_the_unknown_word_as_the_posts():
    from transformers_lite.evaluation.prediction import encode_for_classifier
    from transformers_lite.tokenizers import WordTokenizer

    seeds = WordTokenizer(["good", "box"], "[UNK]")  # no pad token: the posts' padding
    ids, valid = encode_for_classifier(seeds, ["good box", "box"], 4, pad_to_length=True)
    assert ids.tolist() == [[1, 2, 0, 0], [2, 0, 0, 0]] and valid.all()  # padded with UNK (id 0), all read
    ours = WordTokenizer(["good", "box"], "[UNK]", pad="[PAD]")
    ids, valid = encode_for_classifier(ours, ["good box", "box"], 4, pad_to_length=True)
    assert ids[1].tolist() == [3, 1, 1, 1] and valid.tolist()[1] == [True, False, False, False]

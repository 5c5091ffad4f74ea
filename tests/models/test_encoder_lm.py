import pytest
import torch

from transformers_lite import ClassifierConfig, build_model, get_preset
from transformers_lite.config import EncoderLMConfig
from transformers_lite.errors import ConfigError
from transformers_lite.models.encoder_lm import transfer_encoder

SMALL = dict(vocab_size=40, dim=16, n_heads=2, dim_hidden=32, n_blocks=2, dropout=0.0, max_length=12, pad_id=1)


def test_logits_shape_and_head_on_selected_positions_equals_the_full_head():
    model = build_model(EncoderLMConfig(**SMALL, mask_id=2)).eval()
    ids = torch.randint(3, 40, (3, 10))
    logits = model(ids)  # (B, T, V)
    assert logits.shape == (3, 10, 40)
    keep = torch.zeros(3, 10, dtype=torch.bool)
    keep[0, 4] = keep[2, 9] = True
    picked = model.predict(model.encode(ids)[keep])  # what the training loss computes
    torch.testing.assert_close(picked, logits[keep])


def test_output_head_is_tied_to_the_embedding_table():
    model = build_model(EncoderLMConfig(**SMALL, mask_id=2))
    assert "lm_head.weight" not in dict(model.named_parameters())
    before = model(torch.tensor([[3, 4, 5]])).detach()
    with torch.no_grad():
        model.encoder.embedding.weight[7] += 1.0  # token 7 is not in the input: only its output logit can move
    after = model(torch.tensor([[3, 4, 5]])).detach()
    changed = (after - before).abs().amax(dim=(0, 1)) > 0
    assert changed.tolist() == [i == 7 for i in range(40)]


@pytest.mark.parametrize("objective, future_matters", [("masked", True), ("causal", False)])
def test_causal_objective_hides_the_future(objective, future_matters):
    model = build_model(EncoderLMConfig(**SMALL, mask_id=2, objective=objective)).eval()
    a = torch.tensor([[5, 6, 7, 8, 9]])
    b = torch.tensor([[5, 6, 7, 8, 30]])  # only the last token differs
    first = (model(a)[0, :4] - model(b)[0, :4]).abs().max().item()
    assert (first > 1e-6) == future_matters


def test_padding_keys_do_not_change_the_real_positions():
    model = build_model(EncoderLMConfig(**SMALL, mask_id=2)).eval()
    short = model(torch.tensor([[5, 6, 7]]))
    padded = model(torch.tensor([[5, 6, 7, 1, 1]]))
    torch.testing.assert_close(short[0], padded[0, :3])


def test_transfer_copies_embedding_and_blocks_by_name():
    lm = build_model(EncoderLMConfig(**SMALL, mask_id=2))
    clf = build_model(ClassifierConfig(**SMALL, head="mean"))
    copied = transfer_encoder(clf, lm.state_dict(), lm.config)
    assert "encoder.embedding.weight" in copied and any(k.startswith("encoder.blocks.1.") for k in copied)
    assert not any(k.startswith("lm_") for k in copied)
    for k in copied:
        torch.testing.assert_close(clf.state_dict()[k], lm.state_dict()[k])


@pytest.mark.parametrize("change", [{"dim": 32, "dim_hidden": 64}, {"n_blocks": 1}, {"vocab_size": 41}])
def test_transfer_names_every_difference(change):
    lm = build_model(EncoderLMConfig(**SMALL, mask_id=2))
    clf = build_model(ClassifierConfig(**{**SMALL, **change}, head="mean"))
    with pytest.raises(ConfigError, match="does not fit") as err:
        transfer_encoder(clf, lm.state_dict(), lm.config)
    assert ("vocabulary" if "vocab_size" in change else next(iter(change))) in str(err.value)


def test_preset_is_the_classifier_encoder_shape():
    mlm, clf = get_preset("mlm").model, get_preset("classifier").model
    assert (mlm.dim, mlm.n_heads, mlm.dim_hidden, mlm.n_blocks) == (clf.dim, clf.n_heads, clf.dim_hidden, clf.n_blocks)

import dataclasses
import json

import pytest

from transformers_lite import (
    PRESETS,
    ClassifierConfig,
    EncoderLMConfig,
    GeneratorConfig,
    apply_overrides,
    build_model,
    config_from_dict,
    get_preset,
    load_config,
)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_json_round_trip_for_every_preset(name, tmp_path):
    cfg = get_preset(name).model
    path = tmp_path / "config.json"
    cfg.to_json(path)
    assert load_config(path) == cfg
    assert config_from_dict(json.loads(cfg.to_json())) == cfg
    build_model(cfg)


def test_configs_are_frozen_and_validated():
    cfg = GeneratorConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.dim = 64  # type: ignore[misc]
    with pytest.raises(ValueError, match="dim=30 is not divisible by n_heads=4"):
        GeneratorConfig(dim=30)
    with pytest.raises(ValueError, match="dropout"):
        ClassifierConfig(dropout=1.5)
    with pytest.raises(ValueError, match="head must be"):
        ClassifierConfig(head="max")


def test_shared_fields_live_once():
    """The classifier and the pretraining encoder share one definition of their encoder's fields; every
    family shares the block's."""
    from transformers_lite.config import EncoderConfig, Seq2SeqConfig, TransformerConfig

    assert issubclass(ClassifierConfig, EncoderConfig) and issubclass(EncoderLMConfig, EncoderConfig)
    assert all(issubclass(c, TransformerConfig) for c in (GeneratorConfig, Seq2SeqConfig, EncoderConfig))
    shared = {f.name for f in dataclasses.fields(EncoderConfig)}
    assert set(EncoderConfig.SHAPE) <= shared and {"vocab_size", "pad_id", "input_dropout"} <= shared
    spec = GeneratorConfig(norm_eps=1e-6, norm_first=True).block(causal=True)
    assert (spec.norm.eps, spec.norm_first, spec.causal, spec.qkv_bias) == (1e-6, True, True, False)


def test_old_names_of_config_values_still_read():
    """Runs of 0.2 wrote the flatten head as "seed"; they read as "flatten"."""
    assert ClassifierConfig(head="seed").head == "flatten" and ClassifierConfig().pads_to_length
    assert not ClassifierConfig(head="mean").pads_to_length


def test_overrides_parse_types_and_reject_unknown_keys():
    cfg = apply_overrides(get_preset("post-gpt").model, ["n_blocks=6", "dropout=0.2", "tie_embeddings=true"])
    assert (cfg.n_blocks, cfg.dropout, cfg.tie_embeddings) == (6, 0.2, True)
    with pytest.raises(ValueError, match=r"unknown generator config key\(s\): layers"):
        apply_overrides(cfg, ["layers=2"])
    with pytest.raises(ValueError, match=r"context \(renamed max_length\)"):
        apply_overrides(cfg, ["context=128"])
    with pytest.raises(ValueError, match="n_blocks='two' is not a valid int"):
        apply_overrides(cfg, ["n_blocks=two"])
    with pytest.raises(ValueError, match="key=value"):
        apply_overrides(cfg, ["n_blocks"])
    assert apply_overrides(ClassifierConfig(), ["pad_id=3"]).pad_id == 3


def test_unknown_preset_and_family_and_field():
    with pytest.raises(ValueError, match="unknown preset 'gpt-5'.*post-gpt"):
        get_preset("gpt-5")
    with pytest.raises(ValueError, match="unknown model family"):
        config_from_dict({"family": "rnn"})
    with pytest.raises(ValueError, match=r"unknown generator config key\(s\): bogus"):
        config_from_dict({"family": "generator", "bogus": 1})


@pytest.mark.parametrize(
    "field, value",
    [("n_blocks", -2), ("n_blocks", 0), ("max_length", 0), ("dim_hidden", 0), ("vocab_size", 0), ("n_heads", True)],
)
def test_impossible_sizes_are_rejected_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        GeneratorConfig(**{field: value})


@pytest.mark.parametrize("family", [ClassifierConfig, EncoderLMConfig])
def test_encoder_configs_share_their_checks(family):
    with pytest.raises(ValueError, match="max_length=2000 must be at most position_encoding_length=1000"):
        family(max_length=2000)
    with pytest.raises(ValueError, match="input_dropout"):
        family(input_dropout=1.0)
    with pytest.raises(ValueError, match="pad_id=10 is outside the vocabulary of 10"):
        family(vocab_size=10, pad_id=10)
    with pytest.raises(ValueError, match="mask_id=-1 is outside the vocabulary of 10"):
        EncoderLMConfig(vocab_size=10, mask_id=-1)


def test_every_preset_is_one_record_of_its_family():
    from transformers_lite.families import FAMILIES

    for name, recipe in PRESETS.items():
        fam = FAMILIES[recipe.family]
        assert recipe.preset == name and isinstance(recipe.model, fam.config)
        assert isinstance(recipe.data, fam.task.Settings)
    assert all(f.default_preset in PRESETS for f in FAMILIES.values())

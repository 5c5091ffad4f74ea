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
    cfg = get_preset(name)
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


def test_overrides_parse_types_and_reject_unknown_keys():
    cfg = apply_overrides(get_preset("seed-gpt"), ["n_blocks=6", "dropout=0.2", "tie_embeddings=true"])
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
    with pytest.raises(ValueError, match="unknown preset 'gpt-5'.*seed-gpt"):
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


def test_every_preset_has_a_recipe_of_its_family():
    from transformers_lite.recipes import RECIPES, check_registry

    assert check_registry() == [] and set(RECIPES) == set(PRESETS)

"""Presets are what a user gets: one record per preset (model as trained, training, data), and the
README's commands reach the measured settings."""

import json

import pytest

from transformers_lite import PRESETS, Recipe, get_preset
from transformers_lite.recipes import ORIGINAL
from transformers_lite.recipes.presets import ALIASES

from .helpers import tlite


def test_the_readme_gpt_commands_use_the_measured_recipes():
    post = get_preset("post-gpt").override(text="input.txt", max_minutes=4)
    assert post.model.dropout == 0.0  # the model as trained: the post's dropout only slows it within minutes
    assert (post.train.lr, post.train.min_lr_ratio, post.data.batch_size) == (1e-2, 0.0, 32)
    assert (post.train.max_minutes, post.train.epochs, post.train.max_steps) == (4, None, None)
    baby = get_preset("baby-gpt").override(text="input.txt", max_minutes=2)
    assert (baby.train.lr, baby.data.batch_size, baby.train.max_minutes) == (2e-3, 12, 2)


def test_a_translator_given_minutes_starts_from_the_budget_recipe_and_one_given_epochs_does_not(tmp_path):
    def printed(*options: str) -> dict:
        return json.loads(tlite("train", "seq2seq", *options, "--print-config").stdout)

    budget = printed("--max-minutes", "30")
    small = printed()
    chosen = lambda p, limit: (p["preset"], p["train"]["optimizer"], p["train"][limit])  # noqa: E731
    assert chosen(budget, "max_minutes") == ("seq2seq-budget", "muon", 30)
    assert chosen(small, "epochs") == ("seq2seq-small", "adamw", 18)
    # the same model, data and everything else of training but the optimizer and the limits
    assert budget["model"] == small["model"] and budget["data"] == small["data"]
    differ = {k for k in small["train"] if small["train"][k] != budget["train"][k]}
    assert differ == {"optimizer", "epochs", "max_minutes"}, differ
    # a named preset or optimizer wins over the budget's
    named = printed("--preset", "seq2seq-small", "--max-minutes", "5")
    assert chosen(named, "max_minutes") == ("seq2seq-small", "adamw", 5)
    assert printed("--max-minutes", "5", "--optimizer", "adamw")["train"]["optimizer"] == "adamw"
    # a model config alone is trained as a run that names no preset
    (tmp_path / "model.json").write_text(json.dumps(small["model"]))
    assert printed("--config", str(tmp_path / "model.json"), "--max-minutes", "5")["train"]["optimizer"] == "muon"
    assert printed("--config", str(tmp_path / "model.json"))["train"]["optimizer"] == "adamw"


def test_any_limit_given_replaces_the_recipe_limits():
    assert get_preset("complete-works").train.epochs == 10
    steps = get_preset("complete-works").override(max_steps=50)
    assert (steps.train.epochs, steps.train.max_minutes, steps.train.max_steps) == (None, None, 50)
    assert get_preset("post-gpt").override().train.max_minutes == 4  # no limit given: the recipe's


def test_complete_works_is_post_004s_data_setup():
    recipe = get_preset("complete-works")
    assert recipe.data.corpus == "complete-works" and recipe.data.val_fraction == 0.05
    assert recipe.model == get_preset("post-gpt").model


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_round_trips_and_rejects_unknown_settings(name):
    recipe = get_preset(name)
    assert Recipe.from_dict(json.loads(json.dumps(recipe.to_dict()))) == Recipe.from_dict(recipe.to_dict())
    assert Recipe.from_dict(recipe.to_dict()).model == recipe.model
    with pytest.raises(ValueError, match="unknown .* setting"):
        recipe.override(learning_rate=1)


def test_a_typo_in_any_section_of_a_recipe_file_is_an_error():
    printed = get_preset("post-gpt").to_dict()
    for section in ("train", "data"):
        bad = {**printed, section: {**printed[section], "bach_size": 3}}
        with pytest.raises(ValueError, match=f"unknown {section} setting.*bach_size"):
            Recipe.from_dict(bad)
    with pytest.raises(ValueError, match="unknown generator config key.*bach_size"):
        Recipe.from_dict({**printed, "model": {**printed["model"], "bach_size": 3}})


def test_the_posts_own_training_setups_are_presets():
    gpt = get_preset(ORIGINAL["generator"])
    assert gpt.model.dropout == 0.1 and gpt.model == get_preset("post-gpt").model.replace(dropout=0.1)
    t = gpt.train
    assert (t.lr, t.beta1, t.beta2, t.weight_decay, t.grad_clip) == (1e-2, 0.9, 0.999, 0.0, 0.0)
    assert (t.schedule, t.warmup_steps, t.epochs, t.eval_every, t.eval_at_start) == ("constant", 0, 10, 0, True)
    assert (gpt.data.batch_size, gpt.data.val_fraction) == (32, 0.05)
    cls = get_preset(ORIGINAL["classifier"])
    assert cls.model == get_preset("post-classifier").model and cls.train.lr == 1e-3 and cls.train.eval_train
    assert (cls.data.padding, cls.data.embedding_init, cls.data.batch_size) == ("unk", "random", 32)


def test_old_preset_names_and_options_still_work():
    assert get_preset("seed-gpt") == get_preset("post-gpt") and ALIASES["seed-classifier"] == "post-classifier"
    printed = json.loads(tlite("train", "generator", "--recipe", "seed", "--print-config").stdout)
    assert printed["preset"] == "post-gpt-original" and printed["train"]["schedule"] == "constant"
    mixed = json.loads(tlite("train", "generator", "--preset", "baby-gpt", "--recipe", "seed", "--print-config").stdout)
    assert mixed["model"]["dim"] == 128 and mixed["train"]["schedule"] == "constant"
    result = tlite("train", "seq2seq", "--recipe", "seed", "--print-config")
    assert result.returncode == 1 and "the posts give no training setup for the seq2seq" in result.stderr


def test_print_config_is_what_will_be_trained_and_reads_back(tmp_path):
    """The data-derived model fields are computed from the data; the printout trains as it is."""
    text = tmp_path / "t.txt"
    text.write_text("abcab" * 100)
    result = tlite("train", "generator", "--text", text, "--print-config", "--set", "dim=16", "--set", "n_heads=2")
    printed = json.loads(result.stdout)
    assert printed["model"]["vocab_size"] == 4 and "set_from_data" not in printed  # a, b, c + the unknown symbol
    path = tmp_path / "recipe.json"
    path.write_text(result.stdout)
    again = json.loads(tlite("train", "generator", "--config", path, "--print-config").stdout)
    assert again == printed


def test_a_config_file_whose_data_fields_were_edited_says_what_the_data_replaces(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("abcab" * 100)
    result = tlite("train", "generator", "--text", text, "--print-config", "--set", "dim=16", "--set", "n_heads=2")
    assert "replaced" not in result.stderr  # the printout's own values are the data's
    printed = json.loads(result.stdout)
    printed["model"]["vocab_size"] = 50
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps(printed))
    again = tlite("train", "generator", "--config", path, "--print-config")
    assert "the model's vocab_size 50 is replaced by 4 from the data" in again.stderr
    assert json.loads(again.stdout)["model"]["vocab_size"] == 4
    plain = tlite("train", "generator", "--text", text, "--preset", "baby-gpt", "--print-config")
    assert "replaced" not in plain.stderr  # a preset's placeholder is no value of the user's


def test_print_config_without_data_names_the_fields_the_data_will_set():
    printed = json.loads(tlite("train", "classifier", "--print-config").stdout)
    assert set(printed["set_from_data"]["fields"]) == {"n_labels", "label_names", "pad_id", "vocab_size"}
    assert "--train" in printed["set_from_data"]["note"]


@pytest.mark.parametrize(
    ("preset", "field"),
    [
        ("post-gpt", "vocab_size"),
        ("classifier", "n_labels"),
        ("classifier", "pad_id"),
        ("seq2seq-small", "src_vocab_size"),
    ],
)
def test_a_field_the_data_decides_cannot_be_set(preset, field):
    with pytest.raises(ValueError, match=f"{field} is set from the data when training starts"):
        get_preset(preset).override([f"{field}=5"])
    with pytest.raises(ValueError, match=f"{field} is set from the data"):
        get_preset(preset).override({field: 5})


def test_the_translators_share_embeddings_switch_stays_a_setting():
    assert get_preset("seq2seq-small").override(["share_embeddings=false"]).model.share_embeddings is False


def test_model_fields_may_be_given_by_keyword_and_a_setting_wins_a_shared_name():
    from transformers_lite.errors import ConfigError

    classifier = get_preset("classifier")
    one = classifier.override(members=1, max_steps=3)
    assert one.model.members == 1 and one.train.max_steps == 3
    assert classifier.override(["dim=32"], members=2).model == classifier.override(["dim=32", "members=2"]).model
    bpe = get_preset("post-gpt").override(vocab_size=300, tokenizer="bpe")  # the BPE's size, a data setting
    assert bpe.data.vocab_size == 300 and bpe.model.vocab_size == get_preset("post-gpt").model.vocab_size
    with pytest.raises(ConfigError, match="n_labels is set from the data"):
        classifier.override(n_labels=2)
    with pytest.raises(
        ConfigError, match=r"unknown classifier setting\(s\): nope; .* and the model's fields .*members"
    ):
        classifier.override(nope=1)

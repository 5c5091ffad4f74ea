"""The recipes are what a user gets: the README's commands reach the measured settings."""

import pytest

from transformers_lite import Experiment, get_preset, get_recipe
from transformers_lite.recipes import RECIPES, training_model


def test_the_readme_gpt_commands_use_the_measured_recipes():
    seed = Experiment.from_preset("generator", "seed-gpt", text="input.txt", max_minutes=4)
    assert seed.model.dropout == 0.0 and get_preset("seed-gpt").dropout == 0.1  # the preset stays the seed's model
    assert (seed.train.lr, seed.train.min_lr_ratio, seed.data.batch_size) == (1e-2, 0.0, 32)
    assert (seed.train.max_minutes, seed.train.epochs, seed.train.max_steps) == (4, None, None)
    baby = Experiment.from_preset("generator", "baby-gpt", text="input.txt", max_minutes=2)
    assert (baby.train.lr, baby.data.batch_size, baby.train.max_minutes) == (2e-3, 12, 2)


def test_any_limit_given_replaces_the_recipe_limits():
    assert get_recipe("complete-works").train.epochs == 10
    steps = Experiment.from_preset("generator", "complete-works", max_steps=50)
    assert (steps.train.epochs, steps.train.max_minutes, steps.train.max_steps) == (None, None, 50)
    assert Experiment.from_preset("generator", "seed-gpt").train.max_minutes == 4  # no limit given: the recipe's


def test_complete_works_is_seed_004s_data_setup():
    recipe = get_recipe("complete-works")
    assert recipe.data.corpus == "complete-works" and recipe.data.val_fraction == 0.05
    assert training_model("complete-works") == training_model("seed-gpt")


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_builds_an_experiment_and_round_trips(name):
    recipe = get_recipe(name)
    experiment = Experiment.from_preset(recipe.task, name)
    assert Experiment.from_dict(experiment.to_dict()) == experiment
    with pytest.raises(ValueError, match="unknown .* setting"):
        experiment.with_settings(learning_rate=1)


def test_recipe_seed_is_the_posts_own_training_setup():
    gpt = Experiment.from_preset("generator", recipe="seed")
    assert gpt.preset == "seed-gpt" and gpt.model == get_preset("seed-gpt")  # dropout 0.1, as published
    t = gpt.train
    assert (t.lr, t.beta1, t.beta2, t.weight_decay, t.grad_clip) == (1e-2, 0.9, 0.999, 0.0, 0.0)
    assert (t.schedule, t.warmup_steps, t.epochs, t.eval_every, t.eval_at_start) == ("constant", 0, 10, 0, True)
    assert (gpt.data.batch_size, gpt.data.val_fraction) == (32, 0.05)
    cls = Experiment.from_preset("classifier", recipe="seed", train="train.jsonl")
    assert cls.preset == "seed-classifier" and cls.train.lr == 1e-3 and cls.train.eval_train
    assert (cls.data.padding, cls.data.embedding_init, cls.data.batch_size) == ("unk", "random", 32)
    baby = Experiment.from_preset("generator", "baby-gpt", recipe="seed")  # another model, the posts' training
    assert baby.model.dim == 128 and baby.train.schedule == "constant" and baby.recipe == "seed"
    assert Experiment.from_dict(baby.to_dict()) == baby
    with pytest.raises(ValueError, match="the posts give no training setup for the seq2seq"):
        Experiment.from_preset("seq2seq", recipe="seed")
    other = Experiment.from_preset("generator", "seed-gpt", recipe="baby-gpt")  # another preset's recipe
    assert other.train.lr == 2e-3 and other.model.dim == 32
    with pytest.raises(ValueError, match="the recipe is for a classifier, not a generator"):
        Experiment.from_preset("generator", recipe="classifier")


def test_recipe_seed_from_the_command_line(tmp_path):
    import json
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "transformers_lite", "train", "generator", "--recipe", "seed", "--print-config"],
        capture_output=True,
        text=True,
    )
    printed = json.loads(result.stdout)
    assert printed["recipe"] == "seed" and printed["train"]["schedule"] == "constant"
    assert printed["data"]["val_fraction"] == 0.05 and printed["model"]["dropout"] == 0.1


def test_print_config_names_the_fields_the_data_sets_and_reads_back(tmp_path):
    """The classifier's printed model still has the preset's n_labels and vocab_size (the data is not
    read); the printout says so, and --run-config accepts the printout as it is."""
    import json

    from transformers_lite.experiment import print_config

    experiment = Experiment.from_preset("classifier", train="train.jsonl", labels=2)
    printed = json.loads(print_config(experiment))
    assert printed["data"]["labels"] == 2
    assert set(printed["set_from_data"]["fields"]) == {"n_labels", "pad_id", "vocab_size"}
    assert Experiment.from_dict(printed) == experiment
    gpt = json.loads(print_config(Experiment.from_preset("generator", "seed-gpt")))
    assert gpt["set_from_data"]["fields"] == ["vocab_size"]

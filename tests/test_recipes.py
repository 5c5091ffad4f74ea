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

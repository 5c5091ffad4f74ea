"""``--preset auto`` picks the largest size whose budget buys the steps it needs, on the measured speed."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.errors import ConfigError
from transformers_lite.recipes import auto
from transformers_lite.recipes.auto import SIZES, auto_recipe, choose

from ..helpers import ONE_THREAD, tlite

NAMES = [s.preset for s in SIZES]
rates = st.lists(st.floats(0.01, 500), min_size=len(SIZES), max_size=len(SIZES)).map(
    lambda r: dict(zip(NAMES, sorted(r, reverse=True)))  # a larger model is never faster
)


@given(rates=rates, minutes=st.floats(0.1, 120), more=st.floats(1, 10))
def test_more_minutes_or_a_faster_machine_never_pick_a_smaller_model(rates, minutes, more):
    chosen = NAMES.index(choose(minutes, rates)[0])
    assert NAMES.index(choose(minutes * more, rates)[0]) >= chosen
    assert NAMES.index(choose(minutes, {k: v * more for k, v in rates.items()})[0]) >= chosen


@given(rates=rates, minutes=st.floats(0.1, 120))
def test_the_choice_gets_the_steps_it_needs_and_the_next_size_would_not(rates, minutes):
    name, why = choose(minutes, rates)
    i = NAMES.index(name)
    assert minutes * 60 * rates[name] >= SIZES[i].min_steps - 1  # (steps are counted whole)
    if i + 1 < len(SIZES):
        larger = SIZES[i + 1]
        assert int(minutes * 60 * rates[larger.preset]) < larger.min_steps and larger.preset in why


@given(rates=rates, minutes=st.floats(0.1, 120), optimizer=st.sampled_from(["adamw", "muon"]))
def test_each_size_needs_the_steps_of_its_own_optimizer(rates, minutes, optimizer):
    name, why = choose(minutes, rates, optimizers=dict.fromkeys(NAMES, optimizer))
    i = NAMES.index(name)
    assert int(minutes * 60 * rates[name]) >= SIZES[i].needs(optimizer)
    if i + 1 < len(SIZES):
        assert int(minutes * 60 * rates[NAMES[i + 1]]) < SIZES[i + 1].needs(optimizer) and f"with {optimizer}" in why


def test_a_muon_step_is_worth_more_so_larger_sizes_need_fewer_of_them():
    assert all(size.needs("muon") <= size.needs("adamw") for size in SIZES)


def test_a_machine_half_as_fast_picks_as_half_the_minutes_would():
    fast = {name: 40.0 / (4**i) for i, name in enumerate(NAMES)}
    slow = {k: v / 2 for k, v in fast.items()}
    for minutes in (0.5, 1, 2, 5, 15, 60):
        assert choose(minutes, slow)[0] == choose(minutes / 2, fast)[0]


def test_auto_needs_a_budget_and_measures_only_the_sizes_it_can_use(monkeypatch):
    with pytest.raises(ConfigError, match="give --max-minutes N"):
        auto_recipe(None)
    measured = []
    monkeypatch.setattr(auto, "steps_per_second", lambda r: measured.append(r.preset) or 1.0)
    recipe = auto_recipe(0.5, log=lambda _: None)  # 30 steps: only the smallest size
    assert recipe.preset == NAMES[0] and measured == NAMES[:2] and "--preset auto chose" in recipe.notes


def test_the_command_prints_what_it_chose_and_why(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("To be, or not to be, that is the question.\n" * 200)
    printed = tlite(
        "train", "generator", "--text", text, "--preset", "auto", "--max-minutes", "1", "--print-config", env=ONE_THREAD
    )
    assert printed.returncode == 0, printed.stderr
    recipe = json.loads(printed.stdout)
    assert recipe["preset"] in NAMES and recipe["notes"].startswith("--preset auto chose " + recipe["preset"])
    assert "--preset auto:" in printed.stderr and "steps/s measured here" in printed.stderr
    assert recipe["train"]["max_minutes"] == 1
    refused = tlite("train", "classifier", "--train", text, "--preset", "auto", "--print-config", env=ONE_THREAD)
    assert refused.returncode != 0 and "--preset auto" in refused.stderr and "Traceback" not in refused.stderr


def test_timing_a_size_leaves_the_random_state_as_it_was():
    import torch

    from transformers_lite.recipes import get_preset

    torch.manual_seed(7)
    before = torch.random.get_rng_state()
    assert auto.steps_per_second(get_preset("post-gpt")) > 0
    assert torch.equal(torch.random.get_rng_state(), before)


def _rate(recipe):
    """A made-up machine: a size's steps per second fall with its place, its batch and its accumulation."""
    return 4e5 / (recipe.data.batch_size * recipe.train.accumulate * 4 ** NAMES.index(recipe.preset))


@settings(max_examples=40, deadline=None)
@given(
    batch=st.integers(1, 1024),
    accumulate=st.integers(1, 4),
    max_steps=st.none() | st.integers(1, 10_000),
    minutes=st.floats(0.1, 60),
    n_blocks=st.none() | st.integers(1, 8),
)
def test_auto_measures_the_configuration_it_trains_within_the_users_limits(
    batch, accumulate, max_steps, minutes, n_blocks
):
    measured, lines = {}, []
    options = {"batch_size": batch, "accumulate": accumulate, **({"max_steps": max_steps} if max_steps else {})}
    overrides = [f"n_blocks={n_blocks}"] if n_blocks else []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(auto, "steps_per_second", lambda r: measured.setdefault(r.preset, r) and _rate(r))
        recipe = auto_recipe(minutes, overrides, options, log=lines.append)
    trained = recipe.override(overrides, max_minutes=minutes, **options)  # as `tlite train` applies them again
    seen = measured[recipe.preset]
    assert (seen.model, seen.data, seen.train) == (trained.model, trained.data, trained.train)  # what it trains
    steps = int(minutes * 60 * _rate(trained))
    steps = steps if max_steps is None else min(steps, max_steps)  # what the user's limits let it take
    (line,) = lines
    assert f"= {steps:,} steps" in line and f"batch size {batch}" in line
    assert ("--max-steps" in line) == (max_steps is not None)
    assert max_steps is None or f"at most --max-steps {max_steps:,}" in line
    i = NAMES.index(recipe.preset)
    assert steps >= SIZES[i].needs(trained.train.optimizer)  # it gets the steps it needs, the next size would not
    if i + 1 < len(SIZES):
        larger = measured[NAMES[i + 1]]
        assert auto.planned_steps(minutes, _rate(larger), max_steps) < SIZES[i + 1].needs(larger.train.optimizer)


def test_the_measurement_runs_the_users_batch_accumulation_and_model(monkeypatch):
    from transformers_lite.recipes import get_preset

    shapes, real = [], auto.build_model

    def spy(cfg):
        model = real(cfg)
        model.register_forward_pre_hook(lambda _, args: shapes.append((cfg.n_blocks, *args[0].shape)))
        return model

    monkeypatch.setattr(auto, "build_model", spy)
    tiny = ["n_blocks=1", "dim=16", "n_heads=2", "dim_hidden=32", "max_length=8"]
    auto.steps_per_second(get_preset("post-gpt").override(tiny, batch_size=3, accumulate=2, max_steps=5))
    assert shapes == [(1, 3, 8)] * 2 * (auto.WARMUP_STEPS + auto.MEASURED_STEPS)


@pytest.mark.slow  # measures two sizes for real (about 5 s)
def test_a_step_limit_is_honoured_and_printed(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("To be, or not to be, that is the question.\n" * 200)
    printed = tlite(
        "train", "generator", "--text", text, "--preset", "auto", "--max-minutes", "20", "--max-steps", "30",
        "--batch-size", "4", "--print-config", env=ONE_THREAD,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    recipe = json.loads(printed.stdout)
    assert recipe["preset"] == "post-gpt" and recipe["train"]["max_steps"] == 30  # 30 steps: the smallest size
    assert "at most --max-steps 30 = 30 steps" in printed.stderr and "batch size 4" in printed.stderr

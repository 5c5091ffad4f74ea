"""``--preset auto`` picks the largest size whose budget buys the steps it needs, on the measured speed."""

import json

import pytest
from hypothesis import given
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

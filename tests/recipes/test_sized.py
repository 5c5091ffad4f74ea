"""``--preset auto`` for the classifier and the translator: the largest candidate whose minutes buy
``EPOCHS`` epochs of this data, on the speed measured on this data."""

import csv
import json
import math
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.cli.main import build_parser
from transformers_lite.cli.train import build_recipe
from transformers_lite.config import config_from_dict
from transformers_lite.errors import ConfigError
from transformers_lite.recipes import sized
from transformers_lite.recipes.sized import CANDIDATES, EPOCHS, Speed, choose, needed_steps, sized_recipe

from ..helpers import ONE_THREAD, sets, tlite
from ..tasks.test_seq2seq_task import write_reverse_task

NAMES = [c.name for c in CANDIDATES["classifier"]]
# a larger candidate is never faster; each reads the data into its own number of steps an epoch
speeds = st.lists(st.tuples(st.floats(0.01, 500), st.integers(1, 5_000)), min_size=3, max_size=3).map(
    lambda r: {n: Speed(rate, spe) for n, rate, (_, spe) in zip(NAMES, sorted((x for x, _ in r), reverse=True), r)}
)
TINY_CLASSIFIER = sets("dim=8", "n_heads=2", "dim_hidden=16", "n_blocks=1", "max_length=12", "bigram_buckets=64")
TINY_SEQ2SEQ = sets("dim=16", "n_heads=2", "dim_hidden=32", "n_encoder_blocks=1", "n_decoder_blocks=1", "max_length=16")


def faster(speeds, factor):
    return {n: Speed(s.rate * factor, s.steps_per_epoch) for n, s in speeds.items()}


@given(speeds=speeds, minutes=st.floats(0.1, 120), more=st.floats(1, 10))
def test_more_minutes_or_a_faster_machine_never_pick_a_smaller_candidate(speeds, minutes, more):
    chosen = NAMES.index(choose(minutes, speeds)[0])
    assert NAMES.index(choose(minutes * more, speeds)[0]) >= chosen
    assert NAMES.index(choose(minutes, faster(speeds, more))[0]) >= chosen


@given(speeds=speeds, minutes=st.floats(0.1, 120), max_steps=st.none() | st.integers(1, 10_000))
def test_the_choice_gets_the_epochs_it_needs_and_the_next_candidate_would_not(speeds, minutes, max_steps):
    name, why = choose(minutes, speeds, max_steps)
    i, speed = NAMES.index(name), speeds[name]
    steps = min(int(minutes * 60 * speed.rate), max_steps or math.inf)
    if steps >= EPOCHS * speed.steps_per_epoch:
        assert f"= {steps:,} steps >= the {EPOCHS * speed.steps_per_epoch:,} of {EPOCHS} epochs" in why
    else:  # only the smallest is ever chosen short of its epochs, and the line says so
        assert i == 0 and "short of the" in why and "give more minutes" in why
    if i + 1 < len(NAMES) and steps >= needed_steps(speed):
        larger = speeds[NAMES[i + 1]]
        assert min(int(minutes * 60 * larger.rate), max_steps or math.inf) < needed_steps(larger)
        assert NAMES[i + 1] in why


def test_a_machine_half_as_fast_picks_as_half_the_minutes_would():
    fast = {name: Speed(40.0 / 4**i, 100) for i, name in enumerate(NAMES)}
    for minutes in (0.5, 1, 2, 5, 15, 60):
        assert choose(minutes, faster(fast, 0.5))[0] == choose(minutes / 2, fast)[0]


def test_fewer_epochs_asked_are_all_a_candidate_needs():
    speeds = {name: Speed(10.0 / 2**i, 100) for i, name in enumerate(NAMES)}  # 3 epochs: 30, 60, 120 s
    assert choose(1, speeds)[0] == NAMES[1]  # 60 s buy the 4-member ensemble's 300 steps, not the 8's
    name, why = choose(1, speeds, epochs=1)  # one epoch asked: 100 steps, which all three get in a minute
    assert name == NAMES[2] and "at most --epochs 1" in why and "= 100 steps >= the 100 of 1 epoch of 100 steps" in why


def write_table(path, n=120, seed=0):
    """``n`` short texts of three classes, each class with its own words."""
    rng = random.Random(seed)
    words = {"red": ["apple", "cherry", "rose"], "green": ["leaf", "grass", "lime"], "blue": ["sky", "sea", "ice"]}
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["text", "label"])
        for i in range(n):
            label = list(words)[i % 3]
            out.writerow([" ".join(rng.choice(words[label] + ["the", "a", "is"]) for _ in range(6)), label])
    return path


def classifier_settings(table, **kw):
    return {"train": str(table), "batch_size": 8, **kw}


def test_auto_needs_a_budget_and_a_family_it_sizes():
    with pytest.raises(ConfigError, match="give --max-minutes N"):
        sized_recipe("classifier", None)
    with pytest.raises(ConfigError, match="not the mlm"):
        sized_recipe("mlm", 3)


def test_auto_measures_only_the_candidates_it_can_use_and_records_why(monkeypatch, tmp_path):
    measured = []
    rates = {1: 10.0, 4: 2.5, 8: 1.25}  # steps/s of 1, 4, 8 members; 12 steps an epoch: 36 for 3 epochs
    monkeypatch.setattr(sized, "measure", lambda r: measured.append(r.model.members) or Speed(rates[measured[-1]], 12))
    lines = []
    options = classifier_settings(tmp_path / "t.csv")
    recipe = sized_recipe("classifier", 0.2, TINY_CLASSIFIER[1::2], options, lines.append)
    # 12 s: 120 steps of one member, 30 of four (short of 36): four is measured, eight is not
    assert measured == [1, 4] and recipe.model.members == 1 and recipe.train.max_minutes == 0.2
    assert recipe.notes.startswith("--preset auto chose classifier with 1 member: 0.2 min x 10.00 steps/s = 120")
    (line,) = lines
    assert "classifier with 4 members would get 30 of the 36 steps of 3 epochs of 12 steps" in line


def _rate(recipe):
    """A made-up machine: steps per second fall with the members, the batch and the accumulation."""
    return 2e4 / (recipe.model.members * recipe.data.batch_size * recipe.train.accumulate)


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(1, 256),
    accumulate=st.integers(1, 4),
    max_steps=st.none() | st.integers(1, 5_000),
    minutes=st.floats(0.05, 30),
    dim=st.none() | st.sampled_from([8, 16]),
)
def test_auto_measures_the_configuration_it_trains_within_the_users_limits(batch, accumulate, max_steps, minutes, dim):
    measured, lines = {}, []
    options = {"train": "t.csv", "batch_size": batch, "accumulate": accumulate}
    options |= {"max_steps": max_steps} if max_steps else {}
    overrides = [f"dim={dim}"] if dim else []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sized, "measure", lambda r: measured.setdefault(r.model.members, r) and Speed(_rate(r), 40))
        recipe = sized_recipe("classifier", minutes, overrides, options, log=lines.append)
    trained = recipe.override(overrides, max_minutes=minutes, **options)  # as `tlite train` applies them again
    seen = measured[recipe.model.members]
    assert (seen.model, seen.data, seen.train) == (trained.model, trained.data, trained.train)  # what it trains
    steps = int(minutes * 60 * _rate(trained))
    steps = steps if max_steps is None else min(steps, max_steps)
    (line,) = lines
    assert f"= {steps:,} steps" in line and f"batches of {batch}" in line
    assert ("at most --max-steps" in line) == (max_steps is not None)
    assert max_steps is None or f"at most --max-steps {max_steps:,} = " in line


def test_the_measurement_trains_the_candidate_on_its_own_data_and_leaves_the_random_state(tmp_path):
    from transformers_lite.recipes import get_preset

    table = write_table(tmp_path / "t.csv")
    recipe = get_preset("classifier").override(
        [*TINY_CLASSIFIER[1::2], "members=2"], **classifier_settings(table), max_minutes=1
    )
    torch.manual_seed(7)
    before = torch.random.get_rng_state()
    calls = []
    real = sized.Trainer.train_step
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sized.Trainer, "train_step", lambda self, s: calls.append((self, s.step)) or real(self, s))
        speed = sized.measure(recipe)
    assert torch.equal(torch.random.get_rng_state(), before)
    trainer = calls[0][0]
    # 120 records less a stratified tenth for validation, in batches of 8: the steps of one epoch of this data
    assert speed.rate > 0 and speed.steps_per_epoch == trainer.steps_per_epoch == 108 // 8
    assert trainer.config.lr == recipe.train.lr and trainer.task.members == 2  # its trainer, its ensemble
    assert trainer.model.config == recipe.resolved().model  # its vocabulary and classes from the data
    steps = [step for _, step in calls]
    assert len(steps) == sized.WARMUP_STEPS + sized.MEASURED_STEPS and steps == sorted(set(steps))  # spread


def test_the_translator_is_measured_on_its_own_tokenizer_and_batches(tmp_path):
    from transformers_lite.recipes import get_preset

    src, tgt = write_reverse_task(tmp_path, 200, 0)
    options = {"train_src": str(src), "train_tgt": str(tgt), "tokenizer": "word", "max_tokens": 128}
    recipe = get_preset("seq2seq-tiny").override(TINY_SEQ2SEQ[1::2], **options, max_minutes=1)
    speed = sized.measure(recipe)
    task, _ = recipe.prepare()
    assert speed.rate > 0 and speed.steps_per_epoch == task.steps_per_epoch()


def test_the_command_prints_the_choice_and_resume_measures_nothing(tmp_path, monkeypatch):
    table = write_table(tmp_path / "t.csv")
    run = tmp_path / "run"
    printed = tlite(
        "train", "classifier", "--train", table, "--batch-size", "8", *TINY_CLASSIFIER, "--preset", "auto",
        "--max-minutes", "0.05", "--max-steps", "2", "--out", run, env=ONE_THREAD,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    assert "--preset auto: classifier with 1 member: 0.05 min x " in printed.stderr  # 2 steps: short of 3 epochs
    assert "steps/s measured here with batches of 8 of this data" in printed.stderr
    recorded = json.loads((run / "hyperparameters.json").read_text())
    assert recorded["notes"].startswith("--preset auto chose classifier with ")
    assert recorded["train"]["max_minutes"] == 0.05
    monkeypatch.setattr(sized, "measure", lambda r: pytest.fail("a resumed run measured"))
    argv = ["train", "classifier", "--preset", "auto", "--max-minutes", "0.05", "--max-steps", "2", "--resume", run]
    resumed = build_recipe(build_parser().parse_args(list(map(str, argv))))
    assert resumed.model == config_from_dict(recorded["model"]) and resumed.notes == recorded["notes"]

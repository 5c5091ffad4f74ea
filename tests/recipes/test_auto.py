"""``--preset auto``: the size by the steps it needs on the speed measured on the user's data, the rest by a
race on the validation score, all inside the minutes given (the wall time of the whole command)."""

import csv
import json
import random
import time
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.budget import Budget
from transformers_lite.errors import ConfigError
from transformers_lite.recipes import auto, choose, get_preset
from transformers_lite.recipes.auto import EPOCHS, LR_FACTORS, MEMBERS, SIZES, classifier_entrants, rate_entrants
from transformers_lite.recipes.choose import choose_recipe
from transformers_lite.recipes.race import Entrant, Race
from transformers_lite.recipes.recipe import HeadStart
from transformers_lite.settings import TrainConfig
from transformers_lite.training.state import TrainState

from ..helpers import ONE_THREAD, sets, tlite

TINY_CLASSIFIER = sets("dim=8", "n_heads=2", "dim_hidden=16", "n_blocks=1", "max_length=12", "bigram_buckets=64")


def write_table(path, n=120, seed=0, shares=(1, 1, 1)):
    """``n`` short texts of three classes (in ``shares``), each class with its own words."""
    rng = random.Random(seed)
    words = {"red": ["apple", "cherry", "rose"], "green": ["leaf", "grass", "lime"], "blue": ["sky", "sea", "ice"]}
    labels = [label for label, share in zip(words, shares) for _ in range(share)]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["text", "label"])
        for i in range(n):
            label = labels[i % len(labels)]
            out.writerow([" ".join(rng.choice(words[label] + ["the", "a", "is"]) for _ in range(6)), label])
    return path


def started(rate, steps_per_epoch=100, seconds=10.0, epochs=None, optimizer="adamw"):
    """An entrant that trained ``seconds`` at ``rate`` steps per second."""
    trainer = SimpleNamespace(
        steps_per_epoch=steps_per_epoch,
        total_steps=None,
        device=torch.device("cpu"),
        config=TrainConfig(epochs=epochs, optimizer=optimizer, max_minutes=1),
    )
    state = TrainState(step=int(rate * seconds), elapsed=seconds)
    return Entrant("x", get_preset("classifier"), head=HeadStart(None, None, None, trainer, state))


@given(rate=st.floats(0.1, 500), left=st.floats(1, 3600), more=st.floats(1, 10), epoch=st.integers(1, 5000))
def test_more_time_or_a_faster_machine_never_give_fewer_members(rate, left, more, epoch):
    members = auto._members(started(rate, epoch), left)[0]
    assert auto._members(started(rate, epoch), left * more)[0] >= members
    assert auto._members(started(rate * more, epoch), left)[0] >= members


@given(rate=st.floats(0.1, 500), left=st.floats(1, 3600), epoch=st.integers(1, 5000))
def test_an_ensemble_gets_the_epochs_it_needs_and_the_next_would_not(rate, left, epoch):
    members, why = auto._members(started(rate, epoch), left)
    i = MEMBERS.index(members)
    if i:  # an ensemble's step costs its members' steps
        assert int(rate / members * left) >= EPOCHS * epoch and f">= the {EPOCHS * epoch:,} of {EPOCHS} epochs" in why
    if i + 1 < len(MEMBERS):
        assert int(rate / MEMBERS[i + 1] * left) < EPOCHS * epoch
    assert ("the race's winner goes on" in why) == (members == 1)


def fake_size_race(rates, seconds=60.0, minutes=10.0, family="generator", start_s=0.0, **settings):
    """``_by_size`` on a made-up machine: each preset trains at ``rates[preset]`` steps per second, after
    ``start_s`` seconds of reading its data."""
    clock = SimpleNamespace(now=0.0)
    budget = Budget(minutes, started=0.0, clock=lambda: clock.now)
    race = Race([], auto.PLANS[family].score, budget, seconds, log=lambda _: None)

    def train(entrant, until):
        if entrant.head is None:
            preset = entrant.name.split()[1]
            limit = entrant.recipe.train.max_steps
            trainer = SimpleNamespace(
                steps_per_epoch=100, total_steps=limit, device=torch.device("cpu"), config=entrant.recipe.train
            )
            entrant.head = HeadStart(None, None, None, trainer, TrainState())
            entrant.rate_ = rates[preset]
            clock.now += start_s
        state = entrant.state
        clock.now += max(until - state.elapsed, 0.0)
        state.elapsed = max(until, state.elapsed)
        state.step = min(int(entrant.rate_ * state.elapsed), entrant.head.trainer.total_steps or 10**9)
        state.history.append({"step": state.step, "val_bits_per_char": 2.0 - 0.001 * state.step, "val_loss": 1})
        entrant.scores.append(state.history[-1]["val_bits_per_char"])

    race.train = train
    overrides = settings.pop("overrides", [])
    recipe, head, why = auto.PLANS[family].choose(race, overrides, {"max_minutes": minutes, **settings})
    return race, recipe, why


def test_the_largest_size_whose_minutes_buy_its_steps_is_raced_at_three_rates():
    # 10 minutes, 25 s of race: baby-gpt at 2 steps/s buys ~1,150 Muon steps >= 800; small-gpt at 1 ~580 < 1,500
    race, recipe, why = fake_size_race({"post-gpt": 20.0, "baby-gpt": 2.0, "small-gpt": 1.0}, seconds=25.0)
    results = {row["candidate"]: row["result"] for row in race.table()}
    assert results["--preset post-gpt"] == "smaller than baby-gpt, which gets the steps it needs"
    assert results["--preset small-gpt"].startswith("too slow: 1.00 steps/s buy ")
    assert results["--preset small-gpt"].endswith("of the 1,500 steps it needs")
    rates = [name for name in results if name.startswith("--preset baby-gpt")]
    assert len(rates) == 1 + len(LR_FACTORS) and "--preset baby-gpt --lr 0.001 --muon-lr 0.005" in rates
    assert recipe.preset == "baby-gpt" and list(results.values()).count("won") == 1
    assert why.startswith(next(n for n, r in results.items() if r == "won"))


def test_a_machine_too_slow_for_any_larger_size_trains_the_smallest_and_a_given_rate_is_not_raced():
    race, recipe, _ = fake_size_race({"post-gpt": 5.0, "baby-gpt": 0.1, "small-gpt": 0.01}, lr=0.003)
    names = [row["candidate"] for row in race.table()]
    assert names == ["--preset post-gpt", "--preset baby-gpt"]  # small-gpt is not even tried
    assert recipe.preset == "post-gpt" and recipe.train.lr == 0.003


@settings(max_examples=25, deadline=None)
@given(
    batch=st.integers(1, 1024),
    accumulate=st.integers(1, 4),
    max_steps=st.none() | st.integers(1, 10_000),
    n_blocks=st.none() | st.integers(1, 8),
)
def test_auto_measures_the_configuration_it_trains_within_the_users_limits(batch, accumulate, max_steps, n_blocks):
    """Every candidate trains with the user's settings and model fields; a step limit caps what the minutes buy."""
    options = {"batch_size": batch, "accumulate": accumulate, **({"max_steps": max_steps} if max_steps else {})}
    overrides = [f"n_blocks={n_blocks}"] if n_blocks else []
    rates = {"post-gpt": 20.0, "baby-gpt": 2.0, "small-gpt": 1.0}
    race, recipe, _ = fake_size_race(rates, seconds=25.0, **options, overrides=overrides)
    for entrant in race.entrants:
        seen = entrant.recipe
        assert (seen.data.batch_size, seen.train.accumulate, seen.train.max_steps) == (batch, accumulate, max_steps)
        assert n_blocks is None or seen.model.n_blocks == n_blocks
    trained = recipe.override(overrides, max_minutes=10, **options)  # as `tlite train` applies them again
    assert (trained.model, trained.data) == (recipe.model, recipe.data)
    if max_steps is not None and max_steps < 800:  # no larger size gets the steps it needs within the limit
        assert recipe.preset == "post-gpt"


def test_a_step_limit_is_honoured_and_printed():
    race, recipe, why = fake_size_race({"post-gpt": 20.0, "baby-gpt": 2.0, "small-gpt": 1.0}, 25.0, max_steps=30)
    results = {row["candidate"]: row["result"] for row in race.table()}
    assert recipe.preset == "post-gpt" and recipe.train.max_steps == 30
    assert results["--preset baby-gpt"] == "too slow: 2.00 steps/s buy 30 of the 800 steps it needs"


def test_a_size_is_not_measured_once_the_race_has_no_time_left():
    """Reading a larger size's data (a translator's BPE) could outlast the budget: the sizes measured decide."""
    race, recipe, why = fake_size_race({"post-gpt": 20.0, "baby-gpt": 2.0, "small-gpt": 1.0}, 25.0, start_s=30.0)
    assert [row["candidate"] for row in race.table()][:1] == ["--preset post-gpt"]
    assert "baby-gpt not measured: the race's time was spent" in why and recipe.preset == "post-gpt"


def test_the_translator_needs_its_epochs():
    race, recipe, why = fake_size_race({"seq2seq-tiny": 10.0, "seq2seq-budget": 0.2}, 125.0, family="seq2seq")
    results = {row["candidate"]: row["result"] for row in race.table()}
    assert results["--preset seq2seq-budget"].endswith(f"of the {EPOCHS * 100:,} steps it needs")
    assert recipe.preset == "seq2seq-tiny" and "seq2seq-budget 0.20 steps/s buys" in why


def test_the_classifier_races_punctuation_class_weights_where_imbalanced_and_rates(tmp_path):
    base = get_preset("classifier").override(["members=1"], train=str(write_table(tmp_path / "even.csv")))
    names = [e.name for e in classifier_entrants(base, {})]
    assert names == ["--preset classifier", "--word-split punct", "--lr 0.002", "--lr 0.008"]
    skewed = base.override(train=str(write_table(tmp_path / "skewed.csv", shares=(6, 1, 1))))
    entrants = classifier_entrants(skewed, {})
    assert [e.name for e in entrants][:4] == [
        "--preset classifier",
        "--word-split punct",
        "--class-weights balanced",
        "--word-split punct --class-weights balanced",
    ]
    assert entrants[3].recipe.data.word_split == "punct" and entrants[3].recipe.data.class_weights == "balanced"
    given_by_user = {"word_split": "words", "class_weights": "1,1,1", "lr": 1e-3}
    assert [e.name for e in classifier_entrants(skewed, given_by_user)] == ["--preset classifier"]


def test_muon_rates_move_together():
    kept = Entrant("--preset baby-gpt", get_preset("baby-gpt"))
    (half, double) = rate_entrants(kept, lr_given=False)
    assert (half.recipe.train.lr, half.recipe.train.muon_lr) == (1e-3, 0.005)
    assert (double.recipe.train.lr, double.recipe.train.muon_lr) == (4e-3, 0.02)
    assert rate_entrants(kept, lr_given=True) == []


def test_auto_needs_a_budget_and_a_family_it_chooses_for():
    with pytest.raises(ConfigError, match="give --max-minutes N"):
        choose_recipe("classifier", preset="auto")
    with pytest.raises(ConfigError, match="not the mlm"):
        choose_recipe("mlm", preset="auto", budget=Budget(1))


def test_the_generators_sizes_need_fewer_muon_steps():
    assert all(size.needs("muon") <= size.needs("adamw") for size in SIZES)


def wall_time(*args):
    began = time.perf_counter()
    done = tlite(*args, env=ONE_THREAD)
    return done, time.perf_counter() - began


# about 20 s: a real race and run inside a 15-second budget (kept in the default run: it is the budget's promise)
def test_a_budget_is_the_wall_time_of_everything_and_the_winner_goes_on(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("To be, or not to be, that is the question.\nWhether tis nobler in the mind to suffer.\n" * 300)
    run = tmp_path / "run"
    done, took = wall_time(
        "train", "generator", "--text", text, "--preset", "auto", "--max-minutes", 0.25, "--out", run
    )
    assert done.returncode == 0, done.stderr
    spent = json.loads((run / "budget.json").read_text())
    # the run's own clock, from the process's start to its saved run: within the budget and 5 %
    assert spent["total_s"] <= 15 * 1.05 and list(spent["spent_s"]) == [
        "starting",
        "choosing (--preset auto)",
        "reading the data",
        "training",
        "final evaluation and saving",
    ]
    assert spent["spent_s"]["choosing (--preset auto)"] <= 15 * auto.RACE_SHARE + 2  # a bounded share
    assert took < 15 + 30  # and the command's own wall time, with room for a loaded machine
    hyper = json.loads((run / "hyperparameters.json").read_text())
    race = hyper["race"]
    (won,) = [row for row in race if row["result"] == "won"]
    assert hyper["notes"].startswith(f"--preset auto chose {won['candidate']}")
    assert "--preset auto: round 1:" in done.stderr and won["candidate"] in done.stderr
    history = json.loads((run / "history.json").read_text())
    assert history[0]["step"] <= won["steps"] < history[-1]["step"]  # it went on from the race's steps
    assert (
        hyper["budget"]["training_s"] <= 15 and "choosing (--preset auto)" in hyper["budget"]["spent_before_training_s"]
    )


@pytest.mark.slow  # about 15 s
def test_a_named_presets_budget_counts_reading_the_data_and_the_end_too(tmp_path):
    table = write_table(tmp_path / "t.csv", n=300)
    run = tmp_path / "run"
    done, took = wall_time(
        "train", "classifier", "--train", table, *TINY_CLASSIFIER, "--max-minutes", 0.2, "--out", run
    )
    assert done.returncode == 0, done.stderr
    spent = json.loads((run / "budget.json").read_text())
    assert spent["total_s"] <= 12 * 1.05 and took < 12 + 30
    assert list(spent["spent_s"]) == ["starting", "reading the data", "training", "final evaluation and saving"]
    assert "the time budget, of 0.2 minutes (12 s): " in done.stdout


def test_resuming_races_nothing(tmp_path, monkeypatch):
    table = write_table(tmp_path / "t.csv")
    run = tmp_path / "run"
    argv = ["train", "classifier", "--train", table, "--batch-size", "8", *TINY_CLASSIFIER, "--max-steps", "2"]
    assert tlite(*argv, "--out", run, env=ONE_THREAD).returncode == 0
    monkeypatch.setattr(choose, "auto_choice", lambda *a, **k: pytest.fail("a resumed run raced"))
    choice = choose_recipe("classifier", preset="auto", resume=run, settings={"max_steps": 4}, budget=Budget(1))
    assert choice.head is None and choice.recipe.train.max_steps == 4

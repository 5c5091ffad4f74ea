"""The race of ``--preset auto``: successive halving by validation score within the race's seconds, each
candidate a paused trainer with its own random streams, so the winner goes on where it stopped."""

import math
from types import SimpleNamespace

import torch
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.budget import Budget
from transformers_lite.recipes import get_preset
from transformers_lite.recipes.race import Entrant, Race, Score
from transformers_lite.recipes.recipe import HeadStart
from transformers_lite.training.state import TrainState
from transformers_lite.training.trainer import Trainer

from .test_auto import TINY_CLASSIFIER, write_table

F1 = Score("val_macro_f1", higher=True)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def fake_race(qualities, seconds=60.0, minutes=10.0):
    """A race whose candidates learn at their ``quality`` per second (the score after t seconds is
    quality x t): training one advances the budget's clock by the seconds it trained."""
    clock = Clock()
    budget = Budget(minutes, started=0.0, clock=clock)
    entrants = [Entrant(f"c{i}", get_preset("classifier")) for i in range(len(qualities))]
    race = Race(entrants, F1, budget, seconds, log=lambda _: None)

    def train(entrant, until):
        if entrant.head is None:
            entrant.head = HeadStart(None, None, None, SimpleNamespace(device=torch.device("cpu")), TrainState())
        state = entrant.state
        clock.now += max(until - state.elapsed, 0.0)
        state.elapsed, state.step = max(until, state.elapsed), state.step + 1
        quality = qualities[int(entrant.name[1:])]
        state.history.append({"step": state.step, "val_macro_f1": quality * state.elapsed, "val_loss": 1.0})
        entrant.scores.append(state.history[-1]["val_macro_f1"])

    race.train = train
    return race, clock


@given(qualities=st.lists(st.floats(0.01, 1.0), min_size=1, max_size=12, unique=True))
def test_the_better_half_goes_on_each_round_and_the_best_wins(qualities):
    race, clock = fake_race(qualities)
    winner = race.run()
    assert winner.name == f"c{qualities.index(max(qualities))}"  # better at every time: it is never dropped
    rounds = max(len(e.scores) for e in race.entrants)
    assert rounds == (math.ceil(math.log2(len(qualities))) if len(qualities) > 1 else 0)
    for n in range(1, rounds + 1):  # the candidates of round n: half of those of round n - 1, rounded up
        ran = sum(len(e.scores) >= n for e in race.entrants)
        before = len(qualities) if n == 1 else sum(len(e.scores) >= n - 1 for e in race.entrants)
        assert ran == math.ceil(before / 2) or n == 1
    table = race.table()
    assert [row["result"] for row in table].count("won") == 1 and len(table) == len(qualities)
    assert all(row["result"] == "won" or row["result"].startswith("out after round") for row in table)


@given(n=st.integers(2, 12), seconds=st.floats(1, 600))
def test_the_race_trains_within_its_seconds(n, seconds):
    race, clock = fake_race([0.5 + i / 100 for i in range(n)], seconds=seconds, minutes=100)
    race.run()
    assert clock.now <= seconds * (1 + 1e-9)  # every round is sized from what the race has left


def test_a_candidate_that_never_started_says_so():
    race, clock = fake_race([0.1, 0.2, 0.3])
    started = race.train

    def slow(entrant, until):  # the first candidate's first round spends the whole race
        started(entrant, until)
        clock.now += 1000

    race.train = slow
    winner = race.run()
    results = {row["candidate"]: row["result"] for row in race.table()}
    assert winner.name == "c0" and results == {
        "c0": "won",
        "c1": "not started: the race's time was spent",
        "c2": "not started: the race's time was spent",
    }


def test_a_score_ranks_missing_and_non_finite_values_last():
    rows = [{"val_macro_f1": 0.5, "val_loss": 1.0}, {"val_macro_f1": float("nan")}, {}, {"val_macro_f1": 0.5}]
    rows.append({"val_macro_f1": 0.5, "val_loss": 0.9})
    assert sorted(range(5), key=lambda i: F1.key(rows[i])) == [4, 0, 3, 1, 2]  # a tie: the lower loss first
    loss = Score("val_bits_per_char", higher=False)
    assert loss.key({"val_bits_per_char": 1.5}) < loss.key({"val_bits_per_char": 2.0}) < loss.key({})


def test_a_candidate_paused_between_rounds_trains_as_it_would_alone(tmp_path):
    """Dropout draws from the global random stream: each candidate keeps its own between rounds, so
    interleaving the candidates changes none of them (a fake clock: one second per reading)."""
    table = write_table(tmp_path / "t.csv")
    base = get_preset("classifier").override(
        [*TINY_CLASSIFIER[1::2], "members=1", "dropout=0.5"], train=str(table), batch_size=8, max_minutes=1
    )
    race = Race([Entrant("a", base), Entrant("b", base.override(lr=1e-2))], F1, Budget(10), 60, lambda _: None)
    a, b = race.entrants
    for entrant in (a, b):
        race._start(entrant)
        ticks = iter(range(10**6))
        entrant.trainer.clock = lambda ticks=ticks: float(next(ticks))
        entrant.trainer._start_clock = 0.0
    race.train(a, 4)
    race.train(b, 6)
    race.train(a, 8)
    alone = Race([Entrant("a", base)], F1, Budget(10), 60, lambda _: None)
    (solo,) = alone.entrants
    alone._start(solo)
    ticks = iter(range(10**6))
    solo.trainer.clock = lambda: float(next(ticks))
    alone.train(solo, 8)
    assert a.state.step == solo.state.step > 4
    for (name, p), q in zip(a.head.model.state_dict().items(), solo.head.model.state_dict().values()):
        assert torch.equal(p, q), name


def test_the_winner_keeps_its_trainer_and_the_others_let_go(tmp_path):
    table = write_table(tmp_path / "t.csv")
    base = get_preset("classifier").override(
        [*TINY_CLASSIFIER[1::2], "members=1"], train=str(table), batch_size=8, max_minutes=1
    )
    race = Race([Entrant("a", base), Entrant("b", base.override(lr=1e-4))], F1, Budget(1), 3.0, lambda _: None)
    winner = race.run()
    loser = next(e for e in race.entrants if e is not winner)
    assert isinstance(winner.trainer, Trainer) and winner.state.step > 0 and winner.state.history
    assert loser.head.model is None and loser.head.trainer is None and loser.state.step > 0  # its record stays
    # the candidates' schedules are a run's of what the budget has left after the race (60 s less its 3)
    assert 45 < winner.trainer.deadline.allowed_s <= 57 and winner.trainer.schedule.budget_s <= 57

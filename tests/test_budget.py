"""``Budget``: the minutes given as a wall clock, and the account of how they were spent."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.budget import Budget, process_age, seconds


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_minutes_become_seconds_and_the_clock_counts_down():
    clock = Clock()
    budget = Budget(0.5, started=clock(), clock=clock)
    assert budget.seconds == seconds(0.5) == 30.0 and seconds(None) is None and Budget.of(None) is None
    assert Budget.lasting(90).minutes == 1.5
    clock.now += 12.5
    assert budget.spent() == 12.5 and budget.left() == 17.5 and budget.share(0.25) == 7.5
    clock.now += 60
    assert budget.left() == 0.0  # never negative


@given(gaps=st.lists(st.tuples(st.floats(0, 50), st.none() | st.floats(-5, 60)), max_size=8))
def test_the_laps_add_up_to_what_was_spent_and_none_is_negative(gaps):
    clock = Clock()
    budget = Budget(3, started=clock(), clock=clock)
    for i, (gap, asked) in enumerate(gaps):
        clock.now += gap
        budget.lap(f"phase {i % 3}", asked)
    assert all(s >= 0 for s in budget.spending.values())
    assert sum(budget.spending.values()) <= budget.spent() + 1e-9
    budget.lap("the rest")
    assert sum(budget.spending.values()) == pytest.approx(budget.spent())


def test_the_account_names_each_phase_and_the_total():
    clock = Clock()
    budget = Budget(3, started=clock(), clock=clock)
    clock.now += 2.0
    budget.lap("starting")
    clock.now += 40.0
    budget.lap("training", 30.0)  # of 40 s, 30 were training
    budget.lap("final evaluation and saving")
    assert budget.spending == {"starting": 2.0, "training": 30.0, "final evaluation and saving": 10.0}
    assert budget.account() == (
        "of 3 minutes (180 s): 2.0 s starting, 30.0 s training, 10.0 s final evaluation and saving: 42.0 s in all"
    )
    assert budget.record() == {"minutes": 3, "seconds": 180.0, "spent_s": budget.spending, "total_s": 42.0}


def test_a_commands_budget_counts_from_the_process_start():
    age = process_age()
    assert 0.0 < age < 3600  # this test process has been running a while (its imports at least)
    budget = Budget.start(1, from_process_start=True)
    assert budget.spent() >= age
    assert Budget.start(1).spent() < age  # without it: from now

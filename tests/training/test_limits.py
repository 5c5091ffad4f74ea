"""A time budget's training: it is allowed what the budget has left when it begins, records that allowance
for a resumed run, and stops early enough for its end (the final evaluation and the saved weights) to fit."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite import build_model
from transformers_lite.budget import Budget
from transformers_lite.training.limits import END_LEAST_S, END_MARGIN, Deadline
from transformers_lite.training.state import TrainState
from transformers_lite.training.trainer import TrainConfig, Trainer

from .test_trainer import TEXT, TINY, FakeClock, make_task


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(TEXT)
    return path


def budgeted_trainer(text_file, budget=None, **kw):
    task = make_task(text_file, 3)
    torch.manual_seed(3)
    settings = {"max_minutes": 0.5, "eval_every": 100, "warmup_steps": 2, "seed": 3, **kw}
    model = build_model(task.model_config(TINY))
    return Trainer(model, task, TrainConfig(**settings), log=lambda *_: None, clock=FakeClock(), budget=budget)


def test_a_run_begun_late_in_its_budget_trains_what_is_left(text_file):
    """A budget of 30 s of which reading the data spent 10 (its clock stands at 10): 20 one-second steps,
    less the end's share (at least ``END_LEAST_S``)."""
    budget = Budget(0.5, started=0.0, clock=lambda: 10.0)
    trainer = budgeted_trainer(text_file, budget)
    state = trainer.fit()
    assert state.budget_s == 20.0 and state.budget_minutes == 0.5 and trainer.schedule.budget_s == 20.0
    assert state.step == 20 and state.stop_reason == "time budget of 0.5 minutes used"
    alone = budgeted_trainer(text_file).fit()  # without a budget: the minutes count the training alone
    assert alone.budget_s == 30.0 and alone.step == 30


def test_a_time_budget_run_times_its_end_early(text_file):
    """No evaluation is due before the end (every 100 steps): one is made at step 5 to time it."""
    trainer = budgeted_trainer(text_file)
    state = trainer.fit()
    assert [row["step"] for row in state.history] == [5, 30]
    assert trainer.deadline.timed and trainer.deadline.end_s >= END_LEAST_S
    assert [row["step"] for row in budgeted_trainer(text_file, eval_every=4).fit().history][:2] == [4, 8]
    stepped = budgeted_trainer(text_file, max_minutes=None, max_steps=12).fit()  # no budget, nothing to time
    assert [row["step"] for row in stepped.history] == [12]


@given(allowed=st.floats(1, 1e4), evaluation=st.floats(0, 100), elapsed=st.floats(0, 1e4))
def test_the_end_is_reserved_out_of_the_allowance(allowed, evaluation, elapsed):
    deadline = Deadline(allowed / 60)
    deadline.begin(TrainState(), None)
    assert deadline.allowed_s == pytest.approx(allowed)
    assert deadline.left(elapsed) == pytest.approx(max(allowed - END_LEAST_S - elapsed, 0.0))
    deadline.timed_end(evaluation)
    end = max(END_MARGIN * evaluation, END_LEAST_S)
    assert deadline.end_s == pytest.approx(end)
    assert deadline.left(elapsed) == pytest.approx(max(allowed - end - elapsed, 0.0))
    assert deadline.over(elapsed) == (deadline.allowed_s - deadline.end_s - elapsed <= 0)
    assert Deadline(None).left(elapsed) is None and not Deadline(None).over(elapsed)


def test_a_resumed_run_keeps_its_allowance_unless_its_minutes_change():
    budget = Budget(1, started=0.0, clock=lambda: 45.0)  # a resumed command that spent 45 s before training
    state = TrainState(step=10, elapsed=20.0, budget_s=50.0, budget_minutes=1)
    same = Deadline(1)
    same.begin(state, budget)
    assert same.allowed_s == 50.0  # the allowance the run began with: the straight run's schedule
    more = Deadline(2)
    more.begin(state, Budget(2, started=0.0, clock=lambda: 45.0))
    assert more.allowed_s == 20.0 + 75.0 and (state.budget_s, state.budget_minutes) == (95.0, 2)

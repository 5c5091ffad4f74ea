"""When training stops (``Limits``): a step limit, the time budget (``Deadline``), a pause, a signal.

``--max-minutes N`` is the wall time of the whole command (``budget.Budget``): by the time training
begins, reading the data, learning tokenizers and choosing a model (``--preset auto``) have spent some
of it. So a new run is *allowed* what is left of the budget when it begins, on the axis of
``TrainState.elapsed`` (seconds of training over all sessions), and records that allowance in its state
(a resumed run keeps it, so resuming gives the straight run's schedule). The learning-rate schedule
decays over the allowance. Training stops once the time left is what its *end* costs: the final
evaluation, its checkpoint and the saved weights, measured on the run's own evaluations (real seconds,
whatever clock its steps are timed with) and taken with a margin; a run with a time budget evaluates once
early (``TIMED_STEPS``) when no evaluation would otherwise be timed, so the end is known before it is due.
"""

from __future__ import annotations

import math

from ..budget import Budget, seconds
from ..errors import warn
from ..settings import TrainConfig
from .optim import fitted_warmup
from .signals import StopSignals
from .state import TrainState

TIMED_STEPS = 5  # a time-budget run's warmup and end are planned on the speed of its first steps (after the first)
# the end: the final evaluation and its checkpoint (as the last timed evaluation took), then the weights saved
# and checked once more: twice the last evaluation, and never less than END_LEAST_S
END_MARGIN, END_LEAST_S = 2.0, 0.5


def step_limit(config: TrainConfig, steps_per_epoch: int) -> int | None:
    """The optimizer steps a run takes at most: ``max_steps`` or ``epochs`` of ``steps_per_epoch``, the fewer."""
    limits = [config.max_steps] if config.max_steps is not None else []
    if config.epochs is not None:
        limits.append(math.ceil(config.epochs * steps_per_epoch))
    return min(limits) if limits else None


class Deadline:
    """The time budget of one training: ``allowed_s`` seconds of training (``None``: no budget) and
    ``end_s``, what its end costs, which must fit inside them."""

    def __init__(self, minutes: float | None) -> None:
        self.minutes = minutes
        self.allowed_s = seconds(minutes)
        self.end_s = END_LEAST_S
        self.timed = False  # an evaluation was timed in this session
        self.warned = False  # "one step outlasts the whole budget" said once

    def begin(self, state: TrainState, budget: Budget | None) -> None:
        """At a session's start: the allowance a resumed run recorded (for the same minutes), else what is
        left of ``budget`` beyond the training already done (``None``: the minutes themselves), recorded."""
        if self.minutes is None:
            return
        if state.budget_s is not None and state.budget_minutes == self.minutes:
            self.allowed_s = state.budget_s
            return
        self.allowed_s = seconds(self.minutes) if budget is None else state.elapsed + budget.left()
        state.budget_s, state.budget_minutes = self.allowed_s, self.minutes

    def left(self, elapsed: float) -> float | None:
        """Seconds of training left before the end must begin (``None``: no budget)."""
        return None if self.allowed_s is None else max(self.allowed_s - self.end_s - elapsed, 0.0)

    def over(self, elapsed: float) -> bool:
        return self.left(elapsed) == 0.0

    def timed_end(self, evaluation_s: float) -> None:
        """An evaluation (with what its callbacks wrote) took ``evaluation_s`` real seconds: the end costs about
        that, plus the weights saved once more."""
        self.end_s, self.timed = max(END_MARGIN * evaluation_s, END_LEAST_S), True

    def buys(self, state: TrainState, first_step_s: float) -> int | None:
        """The steps the budget buys at the speed of the steps after the first (``None``: no budget)."""
        if self.allowed_s is None:
            return None
        per_step = (state.elapsed - first_step_s) / max(state.step - 1, 1)
        return state.step + int(max(self.allowed_s - state.elapsed, 0.0) / max(per_step, 1e-9))

    def warn_if_one_step_spends_it(self, step_s: float) -> None:
        """A budget is checked between steps and micro-batches, never inside one: say so when a single step
        outlasts the whole budget (a huge context or batch), once."""
        if self.allowed_s is not None and step_s > self.allowed_s and not self.warned:
            self.warned = True
            warn(
                f"one optimizer step took {step_s:.0f} s, longer than the whole --max-minutes {self.minutes:g} budget "
                "(it is checked between steps and micro-batches); lower --batch-size, the context or --accumulate"
            )

    def reason(self) -> str:
        minutes = self.minutes or 0.0
        return f"time budget of {minutes:g} minute{'' if minutes == 1 else 's'} used"


class Limits:
    """Why training stops: its step limit (``total_steps``), its time budget (``deadline``), a pause
    (``--stop-at``), a stop signal; under DDP, a stop one rank voted for (``stop_vote``), all together."""

    def __init__(self, config: TrainConfig, steps_per_epoch: int, signals: StopSignals, distributed: bool) -> None:
        self.total_steps = step_limit(config, steps_per_epoch)
        self.deadline = Deadline(config.max_minutes)
        self.stop_at, self.signals, self.distributed = config.stop_at, signals, distributed
        self.stop_vote = False

    def reason(self, state: TrainState) -> str | None:
        """Why training must stop now, or ``None``."""
        signalled = self.signals.received is not None
        if self.total_steps is not None and state.step >= self.total_steps:
            return "limit reached"
        if self.distributed and self.stop_vote:
            if signalled:
                return "interrupted"
            return "time budget used" if self.deadline.over(state.elapsed) else "stopped with the other ranks"
        if not self.distributed and self.deadline.over(state.elapsed):
            return self.deadline.reason()
        if self.stop_at is not None and state.step >= self.stop_at:
            return f"paused (--stop-at {self.stop_at})"
        if signalled and not self.distributed:
            return "interrupted"
        return None

    def planned_warmup(self, state: TrainState, first_step_s: float, warmup_steps: int) -> int | None:
        """After the first ``TIMED_STEPS`` of a new run whose time budget comes before its step limit: its
        warmup, shortened when longer than a quarter of the steps the budget buys at the speed of the steps
        after the first (``optim.fitted_warmup``); ``None`` when there is nothing to plan."""
        buys = self.deadline.buys(state, first_step_s)
        if buys is None or (self.total_steps is not None and self.total_steps <= buys):
            return None  # no budget, or the step or epoch limit comes first: fitted before the run started
        return fitted_warmup(warmup_steps, buys, expected=True)

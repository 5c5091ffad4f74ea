"""A race of candidate recipes on the user's own data, decided by the validation score (successive halving).

``--preset auto`` (``auto``) trains every candidate for the same seconds of its own training time,
scores each on the validation data, keeps the better half, and trains the survivors on, until one is
left or the race's share of the budget is spent (Jamieson and Talwalkar's successive halving; Hyperband
runs several such brackets). Each candidate is a ``Trainer`` paused between rounds, with its own random
streams, so the winner goes on training from where the race left it (its ``HeadStart``): nothing it
learned in the race is thrown away.

The race runs inside the user's ``--max-minutes``: each round is sized from the wall time the race has
left, so reading the data, learning tokenizers and the evaluations all count. The candidates' schedules
are those of a run given what the budget will have left after the race, so the winner's goes on unbroken.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..budget import Budget
from ..models import build_model
from ..training.state import TrainState, random_streams, set_random_streams
from ..training.trainer import Trainer
from .recipe import HeadStart, Recipe


@dataclass(frozen=True)
class Score:
    """How the race ranks candidates: a validation metric of the history rows, higher or lower better,
    and another one breaking its ties."""

    metric: str
    higher: bool
    tie: str = "val_loss"  # lower is better

    def key(self, row: dict[str, Any]) -> tuple[float, float]:
        """A sort key, best first; a missing or non-finite value ranks last."""
        value, tie = _finite(row.get(self.metric)), _finite(row.get(self.tie))
        main = math.inf if value is None else -value if self.higher else value
        return main, math.inf if tie is None else tie


def _finite(value: Any) -> float | None:  # noqa: ANN401 - a history row's value
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


@dataclass
class Entrant:
    """One candidate: its name (the options that make it, as printed), its recipe; once started, its
    run so far (``head``) and its random streams between rounds."""

    name: str
    recipe: Recipe
    head: HeadStart | None = None
    rng: list[torch.Tensor] = field(default_factory=list)
    scores: list[float | None] = field(default_factory=list)  # the score after each round it ran
    out: str = ""  # why it left the race ("" while in it)

    @property
    def state(self) -> TrainState:
        assert self.head is not None and self.head.state is not None, f"{self.name} has not started"
        return self.head.state

    @property
    def trainer(self) -> Trainer:
        assert self.head is not None and self.head.trainer is not None, f"{self.name} has not started"
        return self.head.trainer

    def rate(self) -> float:
        """Optimizer steps per second of its training so far (evaluations between them included)."""
        return self.state.step / max(self.state.elapsed, 1e-9)

    def row(self, score: Score) -> dict[str, Any]:
        """Its line of the race's table."""
        state = None if self.head is None else self.head.state
        return {
            "candidate": self.name,
            "steps": 0 if state is None else state.step,
            "seconds": 0.0 if state is None else round(state.elapsed, 1),
            score.metric: [None if s is None else round(s, 4) for s in self.scores],
            "result": self.out or "won",
        }


class Race:
    """Successive halving of ``entrants`` within ``seconds`` of ``budget``'s wall time, ranked by ``score``."""

    def __init__(
        self, entrants: list[Entrant], score: Score, budget: Budget, seconds: float, log: Callable[[str], object]
    ) -> None:
        self.entrants, self.score, self.budget, self.log = entrants, score, budget, log
        self.began = budget.spent()
        self.ends_at = self.began + seconds  # on the budget's clock
        self.tokenizers: dict[tuple, dict] = {}  # learned once per data setting that makes them

    def left(self) -> float:
        """Wall seconds the race has left."""
        return max(self.ends_at - self.budget.spent(), 0.0)

    def after(self) -> float:
        """Wall seconds the budget will have left once the race is over."""
        return max(self.budget.left() - self.left(), 0.0)

    def run(self) -> Entrant:
        """Rounds until one candidate is left or the race's time is spent; the winner, its random streams
        restored (the losers' models freed)."""
        number = 0
        while len(alive := [e for e in self.entrants if not e.out]) > 1 and self.left() > 0:
            number += 1
            rounds = math.ceil(math.log2(len(alive)))
            reached = max((e.state.elapsed for e in alive if e.head is not None), default=0.0)
            until = reached + self.left() / rounds / len(alive)
            self.log(
                f"--preset auto: round {number}: {len(alive)} candidates, each trained to {until:.1f} s "
                f"({self.left():.0f} s of the race and {self.budget.left():.0f} s of the budget left)"
            )
            for i, entrant in enumerate(alive):
                if i and self.left() <= 0:  # ranked only against those trained as long: out
                    entrant.out = "not started" if entrant.head is None else f"not trained in round {number}"
                    entrant.out += ": the race's time was spent"
                    continue
                self.train(entrant, until)
            ranked = sorted((e for e in alive if not e.out), key=self._rank)
            for entrant in ranked[math.ceil(len(ranked) / 2) :]:
                entrant.out = f"out after round {number}"
        if any(e.head is not None and not e.out for e in self.entrants):
            for entrant in self.entrants:
                if entrant.head is None and not entrant.out:
                    entrant.out = "not started: the race's time was spent"
        winner = min((e for e in self.entrants if not e.out), key=self._rank)
        for entrant in self.entrants:
            if entrant is not winner and not entrant.out:
                entrant.out = "behind the winner when the race's time was spent"
            if entrant is not winner and entrant.head is not None:  # its record stays, its weights go
                entrant.head = dataclasses.replace(entrant.head, model=None, trainer=None)
        if winner.head is not None:
            set_random_streams(winner.rng, winner.trainer.device)
        return winner

    def train(self, entrant: Entrant, until: float) -> None:
        """``entrant`` trained until ``until`` seconds of its own training (at least one step; started
        first), then scored on the validation data."""
        if entrant.head is None:
            self._start(entrant)
        set_random_streams(entrant.rng, entrant.trainer.device)
        state = entrant.state
        with warnings.catch_warnings():  # a candidate's warmup notes: the winner's are in its record
            warnings.simplefilter("ignore")
            if state.stop_reason is None and state.elapsed < until:
                entrant.trainer.train_until(state, until - state.elapsed)
            if not state.history or state.history[-1].get("step") != state.step:
                entrant.trainer.evaluate(state)
        entrant.rng = random_streams(entrant.trainer.device)
        entrant.scores.append(state.history[-1].get(self.score.metric))
        score = entrant.scores[-1]
        shown = "no score" if score is None else f"{self.score.metric} {score:.4f}"
        self.log(f"  {entrant.name}: {state.step:,} steps in {state.elapsed:.1f} s, {shown}")

    def _start(self, entrant: Entrant) -> None:
        """Its data read (tokenizers learned once per data setting), its model built, its trainer begun with
        the schedule of a run given what the budget will have left after the race."""
        recipe, key = entrant.recipe, _tokenizer_key(entrant.recipe)
        with warnings.catch_warnings():
            if key in self.tokenizers:  # the data's warnings were shown with its first reading
                warnings.simplefilter("ignore")
            task, config = recipe.prepare(self.tokenizers.get(key))
        self.tokenizers.setdefault(key, task.tokenizers())
        torch.manual_seed(recipe.train.seed)  # weight initialisation, as a run's
        model = build_model(config)
        trainer = Trainer(model, task, recipe.train, log=lambda *_: None, budget=Budget.lasting(max(self.after(), 1.0)))
        trainer.fit_warmup_to_run()
        trainer.deadline.timed = True  # each round ends with an evaluation: no early one to time the end
        entrant.head = HeadStart(task, config, model, trainer, trainer.begin())

    def _rank(self, entrant: Entrant) -> tuple[float, float]:
        return self.score.key(entrant.state.history[-1]) if entrant.head else (math.inf, math.inf)

    def table(self) -> list[dict[str, Any]]:
        """The race's table: one row per candidate, in the order they entered."""
        return [e.row(self.score) for e in self.entrants]

    def printed(self) -> str:
        """The table as text, one candidate a line."""
        lines = []
        for row in self.table():
            scores = ", ".join("-" if s is None else f"{s:.4f}" for s in row[self.score.metric])
            lines.append(
                f"  {row['candidate']:<44} {row['steps']:>7,} steps {row['seconds']:>7.1f} s  "
                f"{self.score.metric} {scores or '-'}  {row['result']}"
            )
        return "\n".join(lines)


def _tokenizer_key(recipe: Recipe) -> tuple:
    """The data settings that make a run's tokenizers (its batch size makes none)."""
    data = dataclasses.asdict(recipe.data)
    return tuple(sorted((k, repr(v)) for k, v in data.items() if k not in ("batch_size", "max_tokens")))

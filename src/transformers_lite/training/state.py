"""``TrainState``: what the training loop carries from step to step, checkpointed in ``state.json``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TrainState:
    """Everything the loop carries from step to step; checkpointed in ``state.json``."""

    step: int = 0
    elapsed: float = 0.0  # seconds of training so far, over all sessions of the run
    history: list[dict[str, Any]] = field(default_factory=list)
    best: float | None = None  # lowest val_loss so far
    bad_evals: int = 0  # evaluations since the best one
    warmup_end_s: float | None = None  # elapsed seconds when warmup ended (the time-budget schedule starts there)
    warmup_steps: int | None = None  # the warmup fitted to a time budget from the first steps' speed (None: as set)
    log: list[dict[str, Any]] = field(default_factory=list)  # a training-loss row every log_every steps
    running: dict[str, float] = field(
        default_factory=lambda: {"eval_sum": 0.0, "eval_n": 0, "log_sum": 0.0, "log_n": 0}
    )  # losses since the last row
    stop_reason: str | None = None

    def add_loss(self, loss: float) -> None:
        r = self.running
        r["eval_sum"], r["eval_n"] = r["eval_sum"] + loss, r["eval_n"] + 1
        r["log_sum"], r["log_n"] = r["log_sum"] + loss, r["log_n"] + 1

    def mean_loss(self, since: str) -> float | None:
        """Mean training loss since the last evaluation (``"eval"``) or log row (``"log"``); resets it."""
        r = self.running
        total, n = r[f"{since}_sum"], r[f"{since}_n"]
        r[f"{since}_sum"], r[f"{since}_n"] = 0.0, 0
        return total / n if n else None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "stop_reason"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainState:
        keys = {"step", "elapsed", "history", "best", "bad_evals", "warmup_end_s", "warmup_steps", "log", "running"}
        return cls(**{k: v for k, v in data.items() if k in keys})

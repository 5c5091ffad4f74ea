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
    stop_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "stop_reason"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainState":
        keys = {"step", "elapsed", "history", "best", "bad_evals", "warmup_end_s"}
        return cls(**{k: v for k, v in data.items() if k in keys})

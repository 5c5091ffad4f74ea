"""``Budget``: the minutes a user gives (``--max-minutes N``), as a wall clock; every minute becomes seconds here.

``--max-minutes N`` is the wall time from the command's start to a saved run, all of it: reading the data
and learning its tokenizers, choosing a model (``--preset auto``), training and the final evaluation. So
one clock is started where the command starts (``Budget.start``, which counts from the process's own
start where the system says when that was, so importing the library counts too) and every part asks it
how much is left. Training is handed what is left when it begins (``left``): its schedule decays over
that, and it stops early enough for its final evaluation to fit (``training.limits``). Each part notes
what it spent (``lap``), and the run keeps the account (``spending``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SECONDS_PER_MINUTE = 60.0


def seconds(minutes: float | None) -> float | None:
    """``minutes`` in seconds (``None``: no budget)."""
    return None if minutes is None else minutes * SECONDS_PER_MINUTE


def process_age() -> float:
    """Seconds since this process started (Linux: ``/proc/self/stat``, in clock ticks since boot); 0 where
    the system does not say, or says something implausible (more than an hour)."""
    try:
        after_name = Path("/proc/self/stat").read_text().rpartition(")")[2].split()
        started = int(after_name[19]) / os.sysconf("SC_CLK_TCK")  # field 22, "starttime"
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return age if 0.0 <= age <= 3600.0 else 0.0


@dataclass
class Budget:
    """``minutes`` of wall time counted from ``started`` (a reading of ``clock``), and how they were spent:
    seconds by phase, in the order the phases came (``lap``)."""

    minutes: float
    started: float = field(default_factory=time.perf_counter)
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False, compare=False)
    spending: dict[str, float] = field(default_factory=dict, compare=False)
    _lapped: float = field(default=0.0, repr=False, compare=False)  # seconds spent up to the last lap

    @classmethod
    def start(cls, minutes: float, *, from_process_start: bool = False) -> Budget:
        """A budget starting now, or when this process started (``from_process_start``: a command's budget
        then counts the seconds Python took to import the library)."""
        now = time.perf_counter()
        return cls(minutes, now - (process_age() if from_process_start else 0.0))

    @classmethod
    def lasting(cls, seconds: float) -> Budget:
        """A budget of ``seconds`` starting now."""
        return cls(seconds / SECONDS_PER_MINUTE)

    @classmethod
    def of(cls, minutes: float | None) -> Budget | None:
        """A budget starting now, or ``None`` without minutes."""
        return None if minutes is None else cls(minutes)

    @property
    def seconds(self) -> float:
        return self.minutes * SECONDS_PER_MINUTE

    def spent(self) -> float:
        """Seconds since the budget started."""
        return self.clock() - self.started

    def left(self) -> float:
        """Seconds left (0 once spent)."""
        return max(self.seconds - self.spent(), 0.0)

    def share(self, fraction: float) -> float:
        """``fraction`` of the whole budget, in seconds."""
        return fraction * self.seconds

    def lap(self, phase: str, seconds: float | None = None) -> float:
        """Count the seconds since the last lap (or the start), or the first ``seconds`` of them, as spent on
        ``phase``; returns them."""
        now = self.spent()
        took = now - self._lapped if seconds is None else min(max(seconds, 0.0), now - self._lapped)
        self.spending[phase] = self.spending.get(phase, 0.0) + took
        self._lapped += took
        return took

    def account(self) -> str:
        """How the budget was spent, in one line: ``of 3 minutes (180 s): 2.1 s starting, ...: 178.9 s in all``."""
        parts = ", ".join(f"{seconds:.1f} s {phase}" for phase, seconds in self.spending.items())
        return f"of {self.minutes:g} minute{'' if self.minutes == 1 else 's'} ({self.seconds:.0f} s): {parts}: " + (
            f"{self.spent():.1f} s in all"
        )

    def record(self) -> dict[str, object]:
        """The account as a record (a run's ``budget.json``)."""
        spending = {phase: round(seconds, 2) for phase, seconds in self.spending.items()}
        return {
            "minutes": self.minutes,
            "seconds": self.seconds,
            "spent_s": spending,
            "total_s": round(self.spent(), 2),
        }

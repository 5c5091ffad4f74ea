"""``Family``: what a model family is and what its runs do; every entry of ``families.FAMILIES`` is one.

A family ties together its model config (and so its model and tokenizer files), the task that trains
it (and so its data settings), its default preset, what a run of it can do (``actions``: the ``Run``
methods and inspector views it offers), how it is evaluated and drawn, an example command, and its part
of inspection (the methods of ``inspect.inspection.Inspection``, which it is). A family's class
overrides the methods its runs have; the CLI, ``Run``, the server and the recipes call them instead of
testing a family's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .inspect.inspection import Inspection
from .runs import LoadedRun

DEFAULT_BASELINE = "default"  # ``--baseline`` without a name: the family's own (``Family.default_baselines``)


@dataclass(frozen=True)
class Family(Inspection):
    """One model family. ``actions``: ``generate``, ``next-token``, ``classify``, ``translate`` (what its
    runs do), ``backward`` (a loss to backpropagate), ``timeline`` (training snapshots), ``windows``
    (validation data that is one text), ``plots`` (``tlite inspect``'s model plots)."""

    name: str
    title: str
    config: type  # its model config class
    task: Any  # the task class that trains it; ``task.Settings`` are its data settings
    default_preset: str
    actions: tuple[str, ...]
    evaluate_options: tuple[str, ...]  # the options of ``tlite evaluate`` that apply to it
    command: str  # a ``tlite train`` command
    built_in: str  # the example input when the run's own validation data cannot be read
    # the preset a run given --max-minutes (and no --preset) starts from: one trained for a time budget
    budget_preset: str | None = None
    # the baselines ``tlite evaluate --baseline NAME`` scores beside its runs, and those it scores without a NAME
    baselines: tuple[str, ...] = ()
    default_baselines: tuple[str, ...] = ()

    def baselines_named(self, name: str | None) -> tuple[str, ...]:
        """The baselines ``--baseline NAME`` asks for: none (``None``), this family's default ones
        (``DEFAULT_BASELINE``), or the one named, when it is one of this family's."""
        if name is None:
            return ()
        if name == DEFAULT_BASELINE:
            return self.default_baselines
        if name not in self.baselines:
            known = ", ".join(self.baselines) or "none"
            raise ConfigError(f"--baseline {name}: the baselines of a {self.name} run are {known}")
        return (name,)

    def preset_for(self, max_minutes: float | None) -> str:
        """The preset a new run starts from when none is named: the budget preset when it has minutes."""
        return self.budget_preset if max_minutes is not None and self.budget_preset else self.default_preset

    def __str__(self) -> str:
        return self.name  # what ``run.family`` printed when it was the family's name

    def evaluate(self, run: LoadedRun, data: Any = None, **options: Any) -> dict[str, Any]:  # noqa: ANN401
        """Scores on ``data`` (a file), or on the run's own validation data."""
        raise ConfigError(f"{run.run_dir}: no evaluation is known for a {self.name} run")

    def scores_line(self, result: dict[str, Any]) -> str:
        """``tlite evaluate``'s one line about ``result``."""
        return ", ".join(f"{k} {v}" for k, v in result.items() if isinstance(v, (int, float)))

    def plots(self, run: LoadedRun, kinds: tuple[str, ...], out: Path, options: dict[str, Any]) -> list[Path]:
        """``tlite inspect``'s model plots (families with ``plots`` among their ``actions``)."""
        raise ConfigError(
            f"inspect draws generator and translator runs; {run.run_dir} holds a {self.name} "
            "(a classifier's plots come with `tlite evaluate`)"
        )

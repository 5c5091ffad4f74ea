"""What the inspector asks of a run and of its model family.

The forward and backward traces, the logit lens, the one-step view, the training timeline and the
example input are written once, for every family; the few things that differ (how an input is read
and run, what the loss scores, where the output layer reads the residual stream, what a training
snapshot probes) are the methods of ``Inspection``, which every ``family.Family`` is: each family of
``families.FAMILIES`` overrides those it has (and lists them in its ``actions``). The code here calls
``run.family.trace(...)`` and never tests a family's name.

``InspectedRun`` is what the inspector reads of a run: ``pipeline.Run`` is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from torch import Tensor

from ..layers.trace import Trace
from ..runs import LoadedRun
from .forward import ForwardTrace

Loss = tuple[Tensor, str, Tensor, Tensor]  # the loss, what it scores in words, its labels, the logits' rows read


class Inspection:
    """A family's part of inspection. ``built_in`` is the example input when the run's own validation
    data cannot be read; ``actions`` names what its runs do (``backward``: it scores a loss;
    ``timeline``: training snapshots probe it; ``windows``: its validation data is one text)."""

    name: str
    built_in: str
    actions: tuple[str, ...]

    def trace(self, run: InspectedRun, text: str, target: str | None, trace: Trace) -> tuple[ForwardTrace, Tensor]:
        """One traced forward over ``text`` (and a translator's ``target``): the trace and the model's output."""
        raise ValueError(f"a {self.name} run cannot be traced: its family has no inspection")

    def lens(self, run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
        """The output layer applied to the stream at each block boundary: ``[(label, probabilities)]``."""
        raise ValueError(f"a {self.name} run cannot be read out: its family has no inspection")

    def loss(
        self, run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None
    ) -> Loss:
        """The loss of one traced example (families with ``backward`` among their ``actions``)."""
        raise ValueError(f"no backward trace is known for a {self.name} run")

    def kept_target(self, run: InspectedRun, forward: ForwardTrace) -> str | None:
        """The target the loss scored when none was given (a classifier's prediction, a translation)."""
        return None

    def example(self, run: InspectedRun) -> str | None:
        """An example input from the run's own validation data (``None``: use ``built_in``)."""
        return None

    def example_label(self, run: InspectedRun) -> str | None:
        """The true class of ``example``'s input, where it has one (a classifier's validation record)."""
        return None

    def task_title(self, run: InspectedRun) -> dict[str, str] | None:
        """The run's task in words for the inspector's heading (``{"title", "item"}``), where the family's
        view does not name it itself (a classifier's classes come from its data)."""
        return None

    def probe(self, model: Any, task: Any) -> dict[str, Any]:  # noqa: ANN401 - the family's model and task
        """What a training snapshot records of one validation example (``timeline`` among ``actions``)."""
        raise ValueError(f"a {self.name} run records no training snapshots")

    def windows(self, run: InspectedRun, n: int) -> tuple[Tensor, list[int], int]:
        """``n`` full-context windows of the run's validation text (``windows`` among ``actions``)."""
        raise ValueError(f"validation windows are a generator's text; a {self.name} run has none")


@dataclass
class InspectedRun(LoadedRun):
    """A loaded run as the inspector reads it: its files, and its family (``pipeline.Run`` is one)."""

    family: Inspection = field(kw_only=True)

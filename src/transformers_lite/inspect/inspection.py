"""What the inspector does differently for each model family, as one record per family.

The forward and backward traces, the logit lens, the one-step view, the training timeline and the
example input are written once, for every family; the few things that differ (how an input is read
and run, what the loss scores, where the output layer reads the residual stream, what a training
snapshot probes) are the fields of an ``Inspection``. Each family's record is a field of its entry in
``families.FAMILIES``, the one registry: the code here asks ``inspection(run)`` and never tests a
family's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Inspection:
    """A family's part of inspection (``run`` is a ``pipeline.Run``; traces are ``forward.ForwardTrace``)."""

    trace: Callable[..., Any]  # (run, text, target, trace) -> (ForwardTrace, output): one traced forward
    lens: Callable[..., Any]  # (run, trace, position) -> [(label, probabilities (K,) or (V,))]
    built_in: str  # the example input when the run's own validation data cannot be read
    from_validation: Callable[..., Any] | None = None  # (run) -> an example text from its validation data
    loss: Callable[..., Any] | None = None  # (run, forward, logits, target, position) -> (loss, what, labels, rows)
    kept_target: Callable[..., Any] = lambda run, forward: None  # (run, forward) -> the target the loss scored
    probe: Callable[..., Any] | None = None  # (model, task) -> a training snapshot's view of one example
    windows: Callable[..., Any] | None = None  # (run, n) -> (ids, starts, length): windows of its validation text


def inspection(run: Any, what: str = "inspected") -> Inspection:  # noqa: ANN401 - a pipeline.Run
    """The ``Inspection`` of ``run``'s family (from its registry entry), or a ``ValueError`` saying so."""
    entry = getattr(run, "family_entry", None)
    if entry is None or getattr(entry, "inspection", None) is None:
        raise ValueError(f"a {run.config.family} run cannot be {what}: its family has no inspection")
    return entry.inspection

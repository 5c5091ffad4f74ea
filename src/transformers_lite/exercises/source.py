"""Where an exercise's tensors come from: one forward pass of a real model, read in float64.

``Source(run)`` traces the run's own example input (its validation text) through the run's model; with
no run, a small built-in GPT (the posts' post-norm block with ReLU, 2 blocks of 2 heads over 32
channels, seeded) reads a line of the posts' Shakespeare. An exercise takes the tensors a step of some
kind read (``inputs_of("projection")``: the first Dense's input, weight and bias) or produced
(``output_of``), or the step playing a role in its layer (``inputs_of(role="down")``: the feed-forward's
closing Dense), without their batch of one. What a model does not compute itself (GELU in a ReLU model,
RMSNorm in a LayerNorm one) is computed on its real tensors: the pre-activations its feed-forward
computed, the residual stream its norms read. The upstream gradient a backward exercise receives is
a fixed random tensor (``random_like``), so every element of an answer is tested.

Shapes: T tokens, C channels, F feed-forward units, H heads, D head size, V vocabulary.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from ..config import GeneratorConfig
from ..inspect.examples import example_inputs
from ..inspect.tracing import traced
from ..layers.trace import Recorded, Trace
from ..models import build_model
from .checker import expected_of

if TYPE_CHECKING:
    from .exercise import Exercise

BUILT_IN_TEXT = "First Citizen:\nBefore we proceed any further, hear me speak."


def _built_in() -> tuple[torch.nn.Module, Tensor, list[str]]:
    """The built-in model and the ids of ``BUILT_IN_TEXT`` (one id per character)."""
    vocab = sorted(set(BUILT_IN_TEXT))
    config = GeneratorConfig(
        vocab_size=len(vocab), dim=32, n_heads=2, dim_hidden=64, n_blocks=2, max_length=64, activation="relu"
    )
    torch.manual_seed(0)
    model = build_model(config).eval()
    ids = torch.tensor([[vocab.index(c) for c in BUILT_IN_TEXT]])  # (1, T)
    return model, ids, list(BUILT_IN_TEXT)


class Source:
    """The tensors of one forward pass (see the module docstring); ``what`` says whose, for messages."""

    def __init__(self, run: Any = None, seed: int = 0) -> None:  # noqa: ANN401 - a loaded run
        self.trace = Trace()
        if run is None:
            model, ids, self.tokens = _built_in()
            self.source_tokens: list[str] = []
            with torch.no_grad():
                model(ids, trace=self.trace)
            self.what = "the built-in model (2 blocks of 2 heads, 32 channels)"
        else:
            with torch.no_grad():
                forward, _ = traced(run, _example(run), None, self.trace)
            self.tokens, self.source_tokens = list(forward.tokens), list(forward.source_tokens)
            self.what = f"run {run.run_dir}"
        self.seed = seed
        self.generator = torch.Generator().manual_seed(seed)
        self._given: dict[str, tuple[dict[str, Any], tuple[Any, ...]]] = {}
        self._steps: dict[str, list[str]] = {}
        self._looked: list[str] | None = None  # while an exercise's inputs are taken: the steps looked up
        self._lock = threading.Lock()

    def given(self, exercise: Exercise) -> tuple[dict[str, Any], tuple[Any, ...]]:
        """``exercise``'s arguments on this forward pass and the results expected of them, computed once
        (the same for every check, whatever was checked before: the random upstream gradients are
        drawn from the seed again for each exercise)."""
        with self._lock:
            if exercise.name not in self._given:
                self.generator.manual_seed(self.seed)
                inputs = exercise.inputs(self)
                self._given[exercise.name] = (inputs, expected_of(exercise, inputs))
            return self._given[exercise.name]

    def steps_of(self, exercise: Exercise) -> list[str]:
        """The steps whose tensors ``exercise`` takes, in the order it looks them up (the first is the step
        its result is laid out like, for most), so a page can say where an answer's wrong cells sit; empty
        where this model computes none of the steps it needs."""
        with self._lock:
            if exercise.name not in self._steps:
                self.generator.manual_seed(self.seed)
                self._looked = []
                try:
                    exercise.inputs(self)
                except LookupError:
                    self._looked = []
                self._steps[exercise.name], self._looked = list(dict.fromkeys(self._looked)), None
            return self._steps[exercise.name]

    def records(self, kind: str | None = None, *, role: str | None = None) -> list[tuple[str, Recorded]]:
        """The steps of ``kind`` (``norm`` matches ``norm:layer`` and ``norm:rms``) playing ``role``
        (``layers.steps.ROLES``; each ``None``: any), in forward order."""
        return [(name, self.trace.records[name]) for name in self.trace.find(kind=kind, role=role)]

    def first(self, kind: str | None = None, where: Any = None, *, role: str | None = None) -> tuple[str, Recorded]:  # noqa: ANN401 - a predicate
        for name, record in self.records(kind, role=role):
            if where is None or where(record):
                if self._looked is not None:
                    self._looked.append(name)
                return name, record
        what = " and ".join(f"{k} {v!r}" for k, v in (("of kind", kind), ("playing the role", role)) if v)
        raise LookupError(f"{self.what} computes no step {what}; try it on another run")

    def inputs_of(self, kind: str | None = None, where: Any = None, *, role: str | None = None) -> list[Tensor | None]:  # noqa: ANN401
        """The tensors the first step of ``kind`` (playing ``role``) read, in float64, without a batch of one."""
        _, record = self.first(kind, where, role=role)
        return [None if t is None else _unbatched(t).detach().double() for t in record.inputs]

    def output_of(self, kind: str | None = None, where: Any = None, *, role: str | None = None) -> Tensor:  # noqa: ANN401
        name, _ = self.first(kind, where, role=role)
        return _unbatched(self.trace[name]).detach().double()

    def random_like(self, t: Tensor) -> Tensor:
        """A fixed random tensor of ``t``'s shape: the upstream gradient ``dy`` of a backward exercise."""
        return torch.randn(t.shape, generator=self.generator, dtype=torch.float64)


def _unbatched(t: Tensor) -> Tensor:
    return t[0] if t.dim() >= 3 or (t.dim() == 2 and t.shape[0] == 1) else t


def _example(run: Any) -> str:  # noqa: ANN401
    return example_inputs(run)["text"][:256]


_SOURCES: dict[int, Source] = {}  # by the run object's id, while it lives (a run is not hashable)
_BUILT_IN: list[Source] = []
_MADE = threading.Lock()


def source_of(run: Any = None) -> Source:  # noqa: ANN401 - a loaded run
    """The forward pass of ``run`` (``None``: the built-in model), traced once and kept while the run
    object lives: every later check on it is only the learner's function."""
    with _MADE:
        if run is None:
            if not _BUILT_IN:
                _BUILT_IN.append(Source())
            return _BUILT_IN[0]
        key = id(run)
        if key not in _SOURCES:
            _SOURCES[key] = Source(run)
            weakref.finalize(run, _SOURCES.pop, key, None)
        return _SOURCES[key]

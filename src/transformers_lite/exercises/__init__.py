"""Exercises: derive each step of the posts' equations yourself and have it checked on your own model.

    import transformers_lite as tl
    print(tl.exercises.EXERCISES[1].stub())                       # the statement and the function to write
    verdict = tl.exercises.run_check("dense-backward", "dense_backward.py", run=tl.load("outputs/gpt"))
    print(verdict.message)                                        # right, or where and why not

The same from the command line: ``tlite exercise list|show|check|hint|solution``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .checker import Verdict, check, load_function
from .exercise import Exercise
from .path import BY_NAME, EXERCISES
from .progress import read_progress, record
from .source import Source

__all__ = ["EXERCISES", "Exercise", "Source", "Verdict", "exercise", "run_check", "read_progress"]


def exercise(name: str) -> Exercise:
    """The exercise called ``name``, or a ``ConfigError`` listing them."""
    if name not in BY_NAME:
        raise ConfigError(f"no exercise {name!r}; the exercises: {', '.join(BY_NAME)}")
    return BY_NAME[name]


def run_check(name: str, function: Callable[..., Any] | str | Path, run: Any = None, keep: bool = True) -> Verdict:  # noqa: ANN401
    """Exercise ``name`` checked with ``function`` (a callable, or the file defining it) on the tensors of a
    forward pass of ``run`` (a loaded run; ``None``: the built-in model); a pass is recorded (``keep``)."""
    ex = exercise(name)
    if not callable(function):
        function = load_function(function, ex.function)
    verdict = check(ex, function, ex.inputs(Source(run)))
    if verdict.passed and keep:
        record(name, passed=True)
    return verdict

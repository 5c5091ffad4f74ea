"""Exercises: derive each step of the posts' equations yourself and have it checked on your own model.

    import transformers_lite as tl
    print(tl.exercises.EXERCISES[1].stub())                       # the statement and the function to write
    verdict = tl.exercises.run_check("dense-backward", "dense_backward.py", run=tl.load("outputs/gpt"))
    print(verdict.message)                                        # right, or where and why not

A file is checked in the sandbox (``sandbox``: a confined child process that receives only the step's
tensors); a function you pass is your own Python, called in this process. The same from the command
line: ``tlite exercise list|show|check|hint|solution``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .bounded import check_code, read_answer
from .checker import Verdict, check
from .exercise import Exercise
from .path import BY_NAME, EXERCISES
from .progress import read_progress, record
from .source import Source, source_of

__all__ = ["EXERCISES", "Exercise", "Source", "Verdict", "exercise", "run_check", "read_progress"]


def exercise(name: str) -> Exercise:
    """The exercise called ``name``, or a ``ConfigError`` listing them."""
    if not isinstance(name, str) or name not in BY_NAME:
        raise ConfigError(f"no exercise {name!r}; the exercises: {', '.join(BY_NAME)}")
    return BY_NAME[name]


def run_check(name: str, function: Callable[..., Any] | str | Path, run: Any = None, keep: bool = True) -> Verdict:  # noqa: ANN401
    """Exercise ``name`` checked with ``function`` (a callable, called here; or the file defining it, run in
    the sandbox) on the tensors of a forward pass of ``run`` (a loaded run; ``None``: the built-in model);
    a pass is recorded (``keep``)."""
    ex = exercise(name)
    if isinstance(run, (str, Path)):
        raise ConfigError(f"run: a loaded run, not a path; give run=tl.load({str(run)!r})")
    if run is not None and not hasattr(run, "run_dir"):
        raise ConfigError(f"run: a loaded run (tl.load(PATH)) or None; got a {type(run).__name__}")
    if callable(function):
        given, expected = source_of(run).given(ex)
        verdict = check(ex, function, given, expected)
    elif isinstance(function, (str, Path)):
        verdict = check_code(ex, read_answer(function), run)
    else:
        raise ConfigError(f"function: a function, or the path of the file defining it; got {type(function).__name__}")
    if verdict.passed and keep:
        record(name, passed=True)
    return verdict

"""Checks for settings where they enter (config, recipe and task dataclasses, the sampling and decoding
settings of ``generate`` and ``translate``): each raises a ``ConfigError`` that names the setting, the
rule and the value given. The rule in the message is true of the values it refuses: NaN and the
infinities are not numbers any setting accepts, so an unbounded side reads "a finite number >= 0"."""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import math
import os
import types
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from .errors import ConfigError

SEED_MAX = 2**32 - 1  # NumPy's RandomState, used for PPMI and SVD starts, takes seeds below 2**32


INT_MAX = 2**31 - 1  # every count (steps, batch sizes, tokens) fits a 32-bit int: torch sizes and ranges take it


def integer(name: str, value: Any, low: int = 1, *, high: int | None = None, optional: bool = False) -> None:  # noqa: ANN401
    """``value`` is an int (not a bool) in ``[low, high]`` (``high`` defaults to ``INT_MAX``), or ``None``
    when ``optional``."""
    if value is None and optional:
        return
    limit = INT_MAX if high is None else high
    ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= limit
    if not ok:
        too_big = isinstance(value, int) and value > limit
        rule = f"in [{low}, {limit}]" if high is not None or too_big else f">= {low}"
        raise ConfigError(f"{name} must be an integer {rule}, got {value!r}")


def seed(name: str, value: Any, *, optional: bool = False) -> None:  # noqa: ANN401
    """A random seed: an integer in ``[0, SEED_MAX]`` (a negative seed would silently act as its
    absolute value in Python's ``random``, and a larger one overflows the seeds derived from it)."""
    integer(name, value, 0, high=SEED_MAX, optional=optional)


def number(
    name: str,
    value: Any,  # noqa: ANN401
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    optional: bool = False,
) -> None:
    """``value`` is a finite number in the interval ``[low, high]`` (ends open when asked), or ``None``."""
    if value is None and optional:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        raise ConfigError(f"{name} must be {_span(low, high, low_open, high_open)}, got {value!r}")


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float (10**400) is not a usable setting either
        return False


def _span(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    """The rule in words: ``a number in [0, 1)`` when both ends are given, else ``a finite number > 0``."""
    if low is not None and high is not None:
        return f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"a finite number {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"a finite number {'<' if high_open else '<='} {high:g}"
    return "a finite number"


def choice(name: str, value: Any, choices: Iterable[Any]) -> None:  # noqa: ANN401
    choices = tuple(choices)
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")


def flags(settings: Any) -> None:  # noqa: ANN401
    """Every field of the dataclass ``settings`` declared ``bool`` holds ``True`` or ``False`` (``None`` too
    where it is declared ``bool | None``: "decide from the data"): the text ``"false"`` from a config file
    or the Python API would otherwise count as true."""
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        optional = f.type in ("bool | None", bool | None)
        if optional and value is None:
            continue
        if (optional or f.type in ("bool", bool)) and not isinstance(value, bool):
            allowed = "true, false or null" if optional else "true or false"
            raise ConfigError(f"{f.name} must be {allowed}, got {value!r}")


F = TypeVar("F", bound=Callable[..., Any])
_PLURAL = {str: "strings", int: "integers", float: "finite numbers", bool: "True or False values", Path: "paths"}
_ONE = {str: "a string", int: "an integer", float: "a finite number", bool: "True or False", type(None): "None"}


def arguments(function: F) -> F:
    """``function`` with each argument checked against its type hints before it runs: a value of another
    type is a ``ConfigError`` naming the argument, what it takes and what it got (``texts[1] is 5, an
    int``), so a public function of the Python API never answers a wrong argument with an
    ``AttributeError`` from deep inside. ``Any`` checks nothing; a number's range is checked where it
    enters (``number``, ``integer``), as for the command line."""
    signature = inspect.signature(function)
    hints = functools.cache(lambda: _hints(function))  # resolved at the first call, once

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as err:
            raise ConfigError(f"{function.__name__}(): {err}") from None
        for name, value in bound.arguments.items():
            parameter = signature.parameters[name]
            if name == "self" or name not in hints():
                continue
            if parameter.kind is parameter.VAR_KEYWORD:
                items = [(key, v) for key, v in value.items()]
            elif parameter.kind is parameter.VAR_POSITIONAL:
                items = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
            else:
                items = [(name, value)]
            for where, v in items:
                problem = mismatch(v, hints()[name], where)
                if problem:
                    raise ConfigError(problem)
        return function(*args, **kwargs)

    checked.checks_arguments = True  # type: ignore[attr-defined]
    return typing.cast(F, checked)


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    """The function's resolved type hints; one naming a type only imported for type checkers is left out."""
    try:
        return typing.get_type_hints(function)
    except NameError:
        out = {}
        for name, text in function.__annotations__.items():
            try:
                out[name] = typing.get_type_hints(_Single(function, name, text))[name]
            except NameError:
                continue
        return out


class _Single:
    """One annotation of a function, for ``typing.get_type_hints`` to resolve in the function's module."""

    def __init__(self, function: Callable[..., Any], name: str, text: Any) -> None:  # noqa: ANN401
        self.__annotations__ = {name: text}
        self.__globals__ = getattr(function, "__globals__", {})


def mismatch(value: Any, hint: Any, name: str) -> str | None:  # noqa: ANN401
    """Why ``value`` is not of the type ``hint`` (in words naming ``name``), or None when it is."""
    found = _first(value, hint, name)
    if found is None:
        return None
    where, inner = found
    if where == name:
        return f"{name} must be {describe(hint)}, got {_shown(value)}"
    return f"{name} must be {describe(hint)}; {where} is {_shown(inner)}"


def _first(value: Any, hint: Any, where: str) -> tuple[str, Any] | None:  # noqa: ANN401
    """``(where, value)`` of the first part of ``value`` that does not fit ``hint``, or None."""
    if hint is Any:
        return None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if any(_first(value, member, where) is None for member in args):
            return None
        sequences = [m for m in args if _is_sequence(m)]
        if sequences and isinstance(value, (list, tuple)):  # say which item does not fit
            return _first(value, sequences[0], where)
        return where, value
    if origin is typing.Literal:
        return None if value in args else (where, value)
    if _is_sequence(hint):
        if isinstance(value, str) or not isinstance(value, list if origin is list else (list, tuple)):
            return where, value
        item = args[0] if args else Any
        return next((bad for i, v in enumerate(value) if (bad := _first(v, item, f"{where}[{i}]")) is not None), None)
    kinds: dict[Any, tuple[type, ...]] = {float: (int, float), Path: (os.PathLike,), os.PathLike: (os.PathLike,)}
    cls = origin or hint
    accepted = kinds.get(cls, (cls,))
    if hint in (int, float) and isinstance(value, bool):  # True is an int to Python, never a count
        return where, value
    return None if isinstance(value, accepted) else (where, value)


def _is_sequence(hint: Any) -> bool:  # noqa: ANN401
    origin = typing.get_origin(hint)
    return origin in (list, tuple, collections.abc.Sequence) and (
        origin is not tuple or typing.get_args(hint)[-1:] == (Ellipsis,)
    )


def describe(hint: Any) -> str:  # noqa: ANN401
    """A type hint in words: ``str | Sequence[str]`` -> ``a string or a list of strings``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        words = [describe(m) for m in args if m is not type(None)] + (["None"] if type(None) in args else [])
        return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if _is_sequence(hint):
        item = args[0] if args else Any
        return f"a list of {_PLURAL.get(item, describe(item) + ' each')}"
    if hint in _ONE:
        return _ONE[hint]
    if hint in (Path, os.PathLike) or typing.get_origin(hint) is os.PathLike:
        return "a path"
    return "anything" if hint is Any else f"a {getattr(hint, '__name__', hint)}"


def _shown(value: Any) -> str:  # noqa: ANN401
    text = repr(value)
    return f"{text[:60]}{'...' if len(text) > 60 else ''} ({type(value).__name__})"

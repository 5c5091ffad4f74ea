"""Checks for settings where they enter (config, recipe and task dataclasses, the sampling and decoding
settings of ``generate`` and ``translate``): each raises a ``ConfigError`` that names the setting, the
rule and the value given. The rule in the message is true of the values it refuses: NaN and the
infinities are not numbers any setting accepts, so an unbounded side reads "a finite number >= 0"."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

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

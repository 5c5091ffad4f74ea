"""Checks for settings where they enter (config, recipe and task dataclasses): each raises a
``ConfigError`` that names the setting, the rule and the value given."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .errors import ConfigError


def integer(name: str, value: Any, low: int = 1, *, optional: bool = False) -> None:  # noqa: ANN401
    """``value`` is an int (not a bool) ``>= low``, or ``None`` when ``optional``."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")


def number(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,  # noqa: ANN401
    low_open: bool = False,
    high_open: bool = False,
    optional: bool = False,
) -> None:
    """``value`` is a finite number in the interval ``[low, high]`` (ends open when asked), or ``None``."""
    if value is None and optional:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        span = f"in {left}{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}{right}"
        raise ConfigError(f"{name} must be a number {span}, got {value!r}")


def choice(name: str, value: Any, choices: Iterable[Any]) -> None:  # noqa: ANN401
    choices = tuple(choices)
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")

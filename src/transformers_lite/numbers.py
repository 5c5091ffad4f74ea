"""Numbers as they are printed: a value too large for a float says so, in every output.

A run whose output layer was edited to huge values has a finite loss of thousands of nats, whose
perplexity ``e^loss`` is beyond the largest float (about 1.8e308): ``math.exp`` raised
``OverflowError`` and ``tlite evaluate`` ended in an internal error, and ``json.dumps`` of ``inf`` writes
``Infinity``, which is not JSON. So ``evaluation.metrics.perplexity`` gives ``inf`` there, and every
printer goes through this module: ``shown`` for a line of text (``tlite evaluate``), ``printable`` for
JSON (``--json``, the inspector's answers), where a number that is not finite becomes the words for it.
A finite number is printed exactly as before.
"""

from __future__ import annotations

import json
import math
from typing import Any

TOO_LARGE = "too large to print (over 1.8e308)"
TOO_SMALL = "too large to print (below -1.8e308)"
NOT_A_NUMBER = "not a number"


def words(value: float) -> str | None:
    """What a number that is not finite is called when printed (``None`` for a finite one)."""
    if math.isnan(value):
        return NOT_A_NUMBER
    if math.isinf(value):
        return TOO_LARGE if value > 0 else TOO_SMALL
    return None


def shown(value: float, spec: str = "") -> str:
    """``format(value, spec)``, or the words for a number that is not finite."""
    return words(value) or format(value, spec)


def printable(data: Any) -> Any:  # noqa: ANN401 - any JSON value
    """``data`` with every float that is not finite replaced by its words, so ``json.dumps`` writes JSON."""
    if isinstance(data, float):
        return words(data) or data
    if isinstance(data, dict):
        return {k: printable(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [printable(v) for v in data]
    return data


def json_text(data: Any, **options: Any) -> str:  # noqa: ANN401 - any JSON value
    """``json.dumps`` of ``printable(data)``: what every JSON the commands print or write goes through."""
    return json.dumps(printable(data), allow_nan=False, **options)

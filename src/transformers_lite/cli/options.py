"""Command-line options generated from the settings dataclasses, so ``--help`` shows real defaults.

Every field of ``TrainConfig`` and of a task's ``Settings`` becomes ``--field-name``; its help text
and choices come from the field's metadata and its default from a recipe. Options default to
``None`` on the parser, which means "not given": the recipe's value applies.
"""

from __future__ import annotations

import argparse
from dataclasses import fields, is_dataclass
from typing import Any


def _kind(type_name: Any) -> type:  # noqa: ANN401
    text = str(type_name)
    return bool if "bool" in text else int if "int" in text else float if "float" in text else str


def _shown(value: Any, meta: dict[str, Any]) -> str:  # noqa: ANN401
    if value is None:
        return meta.get("none", "none")
    return f"{value:g}" if isinstance(value, float) else str(value).lower() if isinstance(value, bool) else str(value)


def add_options(group: argparse._ActionsContainer, defaults: Any, *, skip: tuple[str, ...] = ()) -> list[str]:  # noqa: ANN401
    """``--field`` for every field of the dataclass instance ``defaults``; returns the field names."""
    names = []
    inherited = {f.name for base in type(defaults).__mro__[1:] if is_dataclass(base) for f in fields(base)}
    for f in sorted(fields(defaults), key=lambda f: f.name in inherited):  # a class's own options, then inherited
        if f.name in skip:
            continue
        meta = dict(f.metadata)
        flag = "--" + f.name.replace("_", "-")
        text = f"{meta.get('help', '')} (default: {_shown(getattr(defaults, f.name), meta)})"
        kind = _kind(f.type)
        if kind is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            metavar = "FILE" if meta.get("path") else None
            group.add_argument(flag, type=kind, default=None, choices=meta.get("choices"), metavar=metavar, help=text)
        names.append(f.name)
    return names


def given(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """The options of ``names`` that the command line actually gave."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}

"""Tasks plug data, loss and metrics into the model-agnostic trainer: one module per model family."""

from __future__ import annotations

import importlib

TASKS = {"classifier": "classifier", "generator": "generator", "seq2seq": "seq2seq"}


def task_module(name: str):  # noqa: ANN201
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    return importlib.import_module(f"{__name__}.{TASKS[name]}")

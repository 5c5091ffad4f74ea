"""Tasks plug a model family into the model-agnostic trainer: data, loss and metrics, one module each.

Every task class has a frozen ``Settings`` dataclass (its data files and options, with help text)
and is built as ``Task(settings, model_config, seed, tokenizers=None)``; ``tokenizers`` are a run's
own when it is resumed.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from .classifier import ClassifierSettings, ClassifierTask
from .generator import GeneratorSettings, GeneratorTask
from .mlm import MaskedLMSettings, MaskedLMTask
from .seq2seq import Seq2SeqSettings, Seq2SeqTask

TASKS: dict[str, Any] = {
    "classifier": ClassifierTask,
    "generator": GeneratorTask,
    "seq2seq": Seq2SeqTask,
    "mlm": MaskedLMTask,
}


def get_task(name: str) -> Any:  # noqa: ANN401 - a task class
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    return TASKS[name]


__all__ = [
    "TASKS",
    "get_task",
    "ClassifierSettings",
    "ClassifierTask",
    "GeneratorSettings",
    "GeneratorTask",
    "Seq2SeqSettings",
    "Seq2SeqTask",
    "MaskedLMSettings",
    "MaskedLMTask",
]

"""Tasks plug a model family into the model-agnostic trainer: data, loss and metrics, one module each.

Every task class has a frozen ``Settings`` dataclass (its data files and options, with help text) and
is built by ``Task.prepare(settings, model_config, seed, tokenizers=None)`` (``tokenizers``: a resumed
run's own); see ``training.task`` for what a task provides. ``families`` says which task trains which
model family.
"""

from .classifier import ClassifierSettings, ClassifierTask
from .generator import GeneratorSettings, GeneratorTask
from .mlm import MaskedLMSettings, MaskedLMTask
from .seq2seq import Seq2SeqSettings, Seq2SeqTask

__all__ = [
    "ClassifierSettings",
    "ClassifierTask",
    "GeneratorSettings",
    "GeneratorTask",
    "Seq2SeqSettings",
    "Seq2SeqTask",
    "MaskedLMSettings",
    "MaskedLMTask",
]

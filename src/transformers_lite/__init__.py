"""transformers-lite: transformers from first principles on PyTorch.

Public API re-exports only; importing this package has no side effects.
"""

from . import exercises
from .config import (
    ClassifierConfig,
    EncoderLMConfig,
    GeneratorConfig,
    Seq2SeqConfig,
    apply_overrides,
    config_from_dict,
    load_config,
)
from .errors import ConfigError, DataError, RunError, TliteError
from .families import FAMILIES, Family, load
from .layers import Trace
from .models import (
    TransformerClassifier,
    TransformerEncoderLM,
    TransformerGenerator,
    TransformerSeq2Seq,
    build_model,
)
from .pipeline import Run
from .recipes import PRESETS, Recipe, TrainResult, get_preset
from .runs import LoadedRun
from .summary import count_parameters, summary
from .version import __version__

__all__ = [
    "FAMILIES",
    "PRESETS",
    "ClassifierConfig",
    "EncoderLMConfig",
    "GeneratorConfig",
    "Seq2SeqConfig",
    "apply_overrides",
    "config_from_dict",
    "load_config",
    "ConfigError",
    "DataError",
    "RunError",
    "TliteError",
    "Family",
    "Trace",
    "Recipe",
    "TrainResult",
    "get_preset",
    "TransformerClassifier",
    "TransformerEncoderLM",
    "TransformerGenerator",
    "TransformerSeq2Seq",
    "build_model",
    "count_parameters",
    "summary",
    "LoadedRun",
    "Run",
    "load",
    "exercises",
    "__version__",
]

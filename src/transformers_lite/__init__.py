"""transformers-lite: transformers from first principles on PyTorch.

Public API re-exports only; importing this package has no side effects.
"""

from .config import (
    PRESETS,
    ClassifierConfig,
    EncoderLMConfig,
    GeneratorConfig,
    Seq2SeqConfig,
    apply_overrides,
    config_from_dict,
    get_preset,
    load_config,
)
from .errors import ConfigError, DataError, RunError, TliteError
from .experiment import Experiment, TrainResult
from .models import (
    Seq2SeqTransformer,
    TransformerClassifier,
    TransformerEncoderLM,
    TransformerGenerator,
    build_model,
)
from .pipeline import Run, load
from .recipes import RECIPES, Recipe, get_recipe
from .summary import count_parameters, summary
from .training.runs import LoadedRun
from .version import __version__

__all__ = [
    "PRESETS",
    "ClassifierConfig",
    "EncoderLMConfig",
    "GeneratorConfig",
    "Seq2SeqConfig",
    "apply_overrides",
    "config_from_dict",
    "get_preset",
    "load_config",
    "ConfigError",
    "DataError",
    "RunError",
    "TliteError",
    "Experiment",
    "TrainResult",
    "Seq2SeqTransformer",
    "TransformerClassifier",
    "TransformerEncoderLM",
    "TransformerGenerator",
    "build_model",
    "RECIPES",
    "Recipe",
    "get_recipe",
    "count_parameters",
    "summary",
    "LoadedRun",
    "Run",
    "load",
    "__version__",
]

"""transformers-lite: transformers from first principles on PyTorch.

Public API re-exports only; importing this package has no side effects.
"""

from .config import (PRESETS, ClassifierConfig, GeneratorConfig, Seq2SeqConfig, apply_overrides, config_from_dict,
                     get_preset, load_config)
from .models import Seq2SeqTransformer, TransformerClassifier, TransformerGenerator, build_model
from .summary import count_parameters, summary

__version__ = "0.1.0"

__all__ = [
    "PRESETS", "ClassifierConfig", "GeneratorConfig", "Seq2SeqConfig", "apply_overrides", "config_from_dict",
    "get_preset", "load_config", "Seq2SeqTransformer", "TransformerClassifier", "TransformerGenerator",
    "build_model", "count_parameters", "summary", "__version__",
]


def __getattr__(name: str):  # lazy: keeps `import transformers_lite` light
    if name == "load":
        from .training.checkpoint import load

        return load
    raise AttributeError(f"module 'transformers_lite' has no attribute {name!r}")

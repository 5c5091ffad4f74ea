"""Optional dependencies: imported only where needed, with one clear error naming the extra to install.

    pip install 'transformers-lite[plots]'        matplotlib, scikit-learn   inspection plots, t-SNE maps
    pip install 'transformers-lite[baseline]'     scikit-learn               the TF-IDF baseline
    pip install 'transformers-lite[hf]'           huggingface_hub            GPT-2 downloads from the Hub
    pip install 'transformers-lite[data]'         pyarrow, datasets          Parquet files, datasets folders
    pip install 'transformers-lite[all]'          all of the above
    pip install 'transformers-lite[tensorboard]'  tensorboard                --logger tensorboard
    pip install 'transformers-lite[wandb]'        wandb                      --logger wandb

The core runs every default command: it trains every model family with its defaults (the classifier's
PPMI embeddings are computed with torch, ``data.cooccurrence``; the translator's BPE and BLEU come from
``tokenizers`` and ``sacrebleu``), and ``tlite serve`` (``fastapi``, ``uvicorn``) is core too.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .errors import ConfigError


def need(module: str, extra: str, purpose: str) -> ModuleType:
    """``import module``, or a ``ConfigError`` saying which extra provides it and what it is for."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0].replace("sklearn", "scikit-learn")
        raise ConfigError(
            f"{purpose} needs {package}: pip install 'transformers-lite[{extra}]' (or pip install {package})"
        ) from None


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (checked without importing it), for a step that is skipped
    with a warning instead of failing the whole command when its extra is missing."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing or hidden (sys.modules[name] = None)
        return False

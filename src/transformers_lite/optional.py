"""Optional dependencies: imported only where needed, with one clear error naming the extra to install.

    pip install 'transformers-lite[plots]'       matplotlib, scikit-learn   inspection plots, t-SNE
    pip install 'transformers-lite[classifier]'  scipy, scikit-learn        PPMI embeddings, TF-IDF baseline
    pip install 'transformers-lite[translate]'   tokenizers, sacrebleu      BPE tokenizers, BLEU
    pip install 'transformers-lite[hf]'          tokenizers, huggingface_hub  GPT-2 byte-level BPE, Hub downloads
    pip install 'transformers-lite[web]'         fastapi, uvicorn           tlite serve (the browser inspector)
    pip install 'transformers-lite[all]'         all of the above

The core (training and sampling the character GPT) needs only torch, numpy, safetensors and tqdm.
"""

from __future__ import annotations

import importlib
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

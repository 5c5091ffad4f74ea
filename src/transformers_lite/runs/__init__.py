"""Run directories as files: weights (safetensors), config and tokenizers (JSON), older layouts, and
loading a run for inference. Training writes runs (``training``); everything that only *uses* a run
(evaluation, generation, interop, the server) reads it through here."""

from .files import latest_checkpoint, load_weights, read_tensors, save_tensors, save_weights, weights_file
from .loaded import LoadedRun, load, load_tokenizers, read_config, read_weights

__all__ = [
    "LoadedRun",
    "latest_checkpoint",
    "load",
    "load_tokenizers",
    "load_weights",
    "read_config",
    "read_tensors",
    "read_weights",
    "save_tensors",
    "save_weights",
    "weights_file",
]

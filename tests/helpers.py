"""Pieces shared by the tests that drive ``tlite`` as a user would: tiny-model arguments and a runner."""

from __future__ import annotations

import os
import subprocess
import sys


def sets(*fields: str) -> list[str]:
    """``--set`` arguments: ``sets("dim=16", "n_heads=2")`` -> ``["--set", "dim=16", "--set", "n_heads=2"]``."""
    return [arg for field in fields for arg in ("--set", field)]


# a one-block model of width 16 on 16-token windows: trains in a fraction of a second
TINY_MODEL = sets("dim=16", "n_heads=2", "dim_hidden=32", "max_length=16")
TINY_GPT = [*sets("dim=16", "n_heads=2", "dim_hidden=32", "n_blocks=1", "max_length=16"), "--batch-size", "4"]
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1"}  # several test processes share 2 cores


def tlite(*args: object, env: dict[str, str] | None = None, **kw: object) -> subprocess.CompletedProcess:
    """``python -m transformers_lite ARGS`` in a new process, output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "transformers_lite", *map(str, args)], capture_output=True, text=True, env=env, **kw
    )


def train_run(config, data, out, **train):  # noqa: ANN001, ANN003, ANN201 - a model config, a family's data settings
    """A run trained through its recipe, as ``tlite train`` does (the run directory is written), quietly."""
    from transformers_lite import Recipe
    from transformers_lite.settings import TrainConfig

    return Recipe(config.family, config, TrainConfig(**train), data).run(out, log=lambda *_: None)

"""Optional metric loggers: every ``metrics.csv`` row also goes to TensorBoard or Weights & Biases.

``--logger tensorboard`` writes event files to ``RUN/tensorboard`` (view with ``tensorboard --logdir
RUN``); ``--logger wandb`` logs to a W&B run in ``RUN/wandb``. Both are extras; a missing package is
one clear error before training starts.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .callbacks import Callback, Trainer
from .state import TrainState

PACKAGES = {"tensorboard": "tensorboard", "wandb": "wandb"}


def require(name: str) -> None:
    package = PACKAGES[name]
    if importlib.util.find_spec(package) is None:
        raise ConfigError(
            f"--logger {name} needs the {package} package: pip install 'transformers-lite[{name}]' "
            f"(or pip install {package})"
        )


class TensorBoardLogger(Callback):
    def __init__(self, run_dir: Path) -> None:
        require("tensorboard")
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=str(Path(run_dir) / "tensorboard"))

    def on_log(self, trainer: Trainer, state: TrainState, row: dict[str, Any]) -> None:
        for key, value in row.items():
            if key not in ("step", "epoch") and isinstance(value, (int, float)):
                self.writer.add_scalar(key, value, row["step"])

    def on_train_end(self, trainer: Trainer, state: TrainState) -> None:
        self.writer.close()


class WandbLogger(Callback):
    def __init__(self, run_dir: Path, config: dict[str, Any]) -> None:
        require("wandb")
        import wandb

        self.wandb = wandb
        self.run = wandb.init(project="transformers-lite", dir=str(run_dir), config=config, name=Path(run_dir).name)

    def on_log(self, trainer: Trainer, state: TrainState, row: dict[str, Any]) -> None:
        self.run.log({k: v for k, v in row.items() if isinstance(v, (int, float)) and v is not None}, step=row["step"])

    def on_train_end(self, trainer: Trainer, state: TrainState) -> None:
        self.run.finish()


def make_logger(name: str, run_dir: Path, config: dict[str, Any]) -> Callback:
    return TensorBoardLogger(run_dir) if name == "tensorboard" else WandbLogger(run_dir, config)

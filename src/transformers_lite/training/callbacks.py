"""Callbacks: what the training loop does around its steps, each in one small class.

The trainer calls, on every callback in order:

* ``on_train_start(trainer, state)`` once, before the first step of this session;
* ``on_evaluate(trainer, state, record)`` after each evaluation (``record`` is the history row);
* ``on_log(trainer, state, row)`` for every row of ``metrics.csv`` (a training-loss row every
  ``log_every`` steps, and each evaluation);
* ``on_step_end(trainer, state, loss)`` after every optimizer step, evaluation and checkpoint;
* ``on_train_end(trainer, state)`` once, after the final checkpoint and weights are written.

A callback may end training by setting ``state.stop_reason``. The built-in ones: ``ProgressBar``,
``EarlyStopping`` and ``Checkpointer`` (the run directory: checkpoints, ``history.json``,
``metrics.csv`` and the final ``model.safetensors``); tests add their own (for example one that kills
the process at a given step, to check that resuming is exact).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from ..atomic import atomic_write_json
from ..progress import interactive, progress_bar
from ..runs.files import latest_checkpoint, save_weights
from ..runs.manifest import record
from .checkpoint import save_checkpoint
from .distributed import DistContext, broadcast, gather_rng
from .metrics_log import write_metrics_csv
from .state import TrainState


class Trainer(Protocol):
    """What callbacks may use of the trainer."""

    steps_per_epoch: int
    total_steps: int | None
    dist: DistContext
    model: nn.Module
    optimizer: torch.optim.Optimizer


class Callback:
    def on_train_start(self, trainer: Trainer, state: TrainState) -> None:
        pass

    def on_evaluate(self, trainer: Trainer, state: TrainState, record: dict[str, Any]) -> None:
        pass

    def on_log(self, trainer: Trainer, state: TrainState, row: dict[str, Any]) -> None:
        pass

    def on_step_end(self, trainer: Trainer, state: TrainState, loss: float) -> None:
        pass

    def on_train_end(self, trainer: Trainer, state: TrainState) -> None:
        pass


class ProgressBar(Callback):
    """A tqdm bar per epoch with the running mean loss, on rank 0 when someone is watching (a terminal or
    a notebook; or ``force``)."""

    def __init__(self, force: bool = False) -> None:
        self.force, self.bar, self.total, self.loss_n = force, None, 0.0, 0

    def _open(self, trainer: Trainer, state: TrainState) -> None:
        spe = trainer.steps_per_epoch
        epochs = "?" if trainer.total_steps is None else math.ceil(trainer.total_steps / spe)
        self.bar = progress_bar(
            total=spe,
            initial=state.step % spe,
            desc=f"epoch {state.step // spe + 1}/{epochs}",
            leave=False,
            dynamic_ncols=True,
        )

    def on_step_end(self, trainer: Trainer, state: TrainState, loss: float) -> None:
        if not trainer.dist.is_main or not (self.force or interactive()):
            return
        if state.step % trainer.steps_per_epoch == 0 or state.stop_reason:
            self.close()  # the epoch (or the run) ended with this step
            return
        if self.bar is None:
            self._open(trainer, state)
            self.total, self.loss_n = 0.0, 0
        self.total, self.loss_n = self.total + loss, self.loss_n + 1
        self.bar.update(1)
        self.bar.set_postfix(mean_loss=f"{self.total / self.loss_n:.4f}", batch_loss=f"{loss:.4f}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def on_train_end(self, trainer: Trainer, state: TrainState) -> None:
        self.close()


class Checkpointer(Callback):
    """The run directory while training: a checkpoint (with ``history.json`` and ``metrics.csv``) at
    every evaluation, or every ``every`` optimizer steps when given, and at the end one more (unless
    that step has one) and the final ``model.safetensors``. Checkpointing is a collective under DDP
    (every rank's dropout stream is kept); only rank 0 writes."""

    def __init__(self, run_dir: str | Path, every: int | None = None) -> None:
        self.run_dir, self.every = Path(run_dir), every

    def on_evaluate(self, trainer: Trainer, state: TrainState, record: dict[str, Any]) -> None:
        if self.every is None:
            self.checkpoint(trainer, state)

    def on_step_end(self, trainer: Trainer, state: TrainState, loss: float) -> None:
        if self.every and state.step % self.every == 0 and not self.has_checkpoint(state):
            self.checkpoint(trainer, state)

    def on_train_end(self, trainer: Trainer, state: TrainState) -> None:
        if broadcast(not self.has_checkpoint(state), trainer.dist):
            self.checkpoint(trainer, state)
        if trainer.dist.is_main:
            save_weights(trainer.model, self.run_dir / "model.safetensors")
            record(self.run_dir, ["model.safetensors"])

    def has_checkpoint(self, state: TrainState) -> bool:
        last = latest_checkpoint(self.run_dir)
        return last is not None and last.name == f"step-{state.step:08d}"

    def checkpoint(self, trainer: Trainer, state: TrainState) -> None:
        rank_rng = gather_rng(trainer.dist) if trainer.dist.active else None  # every rank's dropout stream
        if trainer.dist.is_main:
            save_checkpoint(self.run_dir, trainer.model, trainer.optimizer, state.to_dict(), rank_rng=rank_rng)
            atomic_write_json(self.run_dir / "history.json", state.history)
            write_metrics_csv(self.run_dir / "metrics.csv", state.history, state.log)


class EarlyStopping(Callback):
    """Stop once ``patience`` evaluations in a row have not improved the validation loss."""

    def __init__(self, patience: int) -> None:
        self.patience = patience

    def on_evaluate(self, trainer: Trainer, state: TrainState, record: dict[str, Any]) -> None:
        if state.bad_evals >= self.patience and state.stop_reason is None:
            state.stop_reason = f"early stopping: val_loss did not improve for {self.patience} evaluations"

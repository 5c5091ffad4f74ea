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
    config: Any  # its TrainConfig
    log: Any  # ``log(line)`` prints a line

    def final_weights(self) -> Any:  # noqa: ANN401 - a context manager: the weights a run is saved with
        ...


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
    """Progress on rank 0. When someone is watching (a terminal or a notebook; or ``force``): a tqdm bar
    per epoch with the running mean loss, whose total ends where the run's step limit ends (not at the
    epoch's end), and the time left of a budget. Otherwise (output piped to a file or a pipe): a plain
    line every ``every_s`` seconds, so a log shows progress between evaluations."""

    def __init__(self, force: bool = False, every_s: float = 30.0) -> None:
        self.force, self.total, self.loss_n = force, 0.0, 0
        self.bar: Any = None  # a tqdm bar once training starts
        self.every_s, self.last_line_s = every_s, 0.0

    def _open(self, trainer: Trainer, state: TrainState) -> None:
        spe = trainer.steps_per_epoch
        epoch = state.step // spe
        end = (epoch + 1) * spe if trainer.total_steps is None else min((epoch + 1) * spe, trainer.total_steps)
        epochs = "?" if trainer.total_steps is None else math.ceil(trainer.total_steps / spe)
        self.bar = progress_bar(
            total=end - epoch * spe,
            initial=state.step - epoch * spe,
            desc=f"epoch {epoch + 1}/{epochs}",
            leave=False,
            dynamic_ncols=True,
        )

    def on_step_end(self, trainer: Trainer, state: TrainState, loss: float) -> None:
        if not trainer.dist.is_main:
            return
        if not (self.force or interactive()):
            self._plain_line(trainer, state, loss)
            return
        if state.step % trainer.steps_per_epoch == 0 or state.stop_reason:
            self.close()  # the epoch (or the run) ended with this step
            return
        if self.bar is None:
            self._open(trainer, state)
            self.total, self.loss_n = 0.0, 0
        self.total, self.loss_n = self.total + loss, self.loss_n + 1
        self.bar.update(1)
        postfix = {"mean_loss": f"{self.total / self.loss_n:.4f}", "batch_loss": f"{loss:.4f}"}
        if trainer.config.max_minutes is not None:
            postfix["budget_left"] = f"{max(trainer.config.max_minutes * 60 - state.elapsed, 0):.0f}s"
        self.bar.set_postfix(postfix, refresh=False)

    def _plain_line(self, trainer: Trainer, state: TrainState, loss: float) -> None:
        self.total, self.loss_n = self.total + loss, self.loss_n + 1
        if state.elapsed - self.last_line_s < self.every_s or state.stop_reason:
            return
        limit = "" if trainer.total_steps is None else f" of {trainer.total_steps}"
        budget = trainer.config.max_minutes
        left = "" if budget is None else f" | {max(budget * 60 - state.elapsed, 0):.0f} s of the budget left"
        rate = self.loss_n / max(state.elapsed - self.last_line_s, 1e-9)
        trainer.log(
            f"step {state.step}{limit} | train_loss {self.total / self.loss_n:.4f} (mean of the last "
            f"{self.loss_n} steps) | {rate:.1f} steps/s{left}"
        )
        self.total, self.loss_n, self.last_line_s = 0.0, 0, state.elapsed

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
            with trainer.final_weights():  # the moving average with --ema; the checkpoint keeps both
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

"""Callbacks: what the training loop does around its steps, each in one small class.

The trainer calls, on every callback in order:

* ``on_train_start(trainer, state)`` once, before the first step of this session;
* ``on_evaluate(trainer, state, record)`` after each evaluation (``record`` is the history row);
* ``on_log(trainer, state, row)`` for every row of ``metrics.csv`` (a training-loss row every
  ``log_every`` steps, and each evaluation);
* ``on_step_end(trainer, state, loss)`` after every optimizer step, evaluation and checkpoint;
* ``on_train_end(trainer, state)`` once, after the final checkpoint and weights are written.

A callback may end training by setting ``state.stop_reason``. The built-in ones: ``ProgressBar``,
``KeepBest`` (the best evaluation by a metric and its weights; early stopping) and ``Checkpointer``
(the run directory: checkpoints, ``history.json``, ``metrics.csv``, the final ``model.safetensors``
and ``kept.json``); tests add their own (for example one that kills the process at a given step, to
check that resuming is exact).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from ..atomic import atomic_write_json
from ..errors import ConfigError
from ..progress import interactive, progress_bar
from ..runs.files import latest_checkpoint, load_model_tensors, save_tensors, save_weights
from ..runs.manifest import record
from .checkpoint import best_file_name, save_checkpoint
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

    def time_left(self, elapsed: float) -> float | None:  # seconds of training the time budget leaves (None: none)
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
        if (left := trainer.time_left(state.elapsed)) is not None:
            postfix["budget_left"] = f"{left:.0f}s"
        self.bar.set_postfix(postfix, refresh=False)

    def _plain_line(self, trainer: Trainer, state: TrainState, loss: float) -> None:
        self.total, self.loss_n = self.total + loss, self.loss_n + 1
        if state.elapsed - self.last_line_s < self.every_s or state.stop_reason:
            return
        limit = "" if trainer.total_steps is None else f" of {trainer.total_steps}"
        seconds = trainer.time_left(state.elapsed)
        left = "" if seconds is None else f" | {seconds:.0f} s of the budget left"
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
    (every rank's dropout stream is kept); only rank 0 writes.

    Between checkpoints the record is written too, so a run is seen while it trains (``tlite serve``
    draws its curves before its first checkpoint): the first ``metrics.csv`` row at once, then at most
    every ``live_s`` seconds (rewriting the whole file at every row of a long run would cost more than
    its steps). Both files are rewritten from the training state, so a run resumed from a checkpoint
    writes them again from that checkpoint's state."""

    def __init__(self, run_dir: str | Path, every: int | None = None, live_s: float = 2.0) -> None:
        self.run_dir, self.every, self.live_s = Path(run_dir), every, live_s
        self.written_at: float | None = None  # when the record was last written (time.monotonic)

    def on_log(self, trainer: Trainer, state: TrainState, row: dict[str, Any]) -> None:
        due = self.written_at is None or time.monotonic() - self.written_at >= self.live_s
        if due and trainer.dist.is_main:
            self.write_record(state)

    def write_record(self, state: TrainState) -> None:
        """``history.json`` and ``metrics.csv`` as the training state holds them now."""
        atomic_write_json(self.run_dir / "history.json", state.history)
        write_metrics_csv(self.run_dir / "metrics.csv", state.history, state.log)
        self.written_at = time.monotonic()

    def on_evaluate(self, trainer: Trainer, state: TrainState, record: dict[str, Any]) -> None:
        if self.every is None:
            self.checkpoint(trainer, state)

    def on_step_end(self, trainer: Trainer, state: TrainState, loss: float) -> None:
        if self.every and state.step % self.every == 0 and not self.has_checkpoint(state):
            self.checkpoint(trainer, state)

    def on_train_end(self, trainer: Trainer, state: TrainState) -> None:
        if broadcast(not self.has_checkpoint(state), trainer.dist):
            self.checkpoint(trainer, state)  # the last step's weights: --resume continues from them
        if trainer.dist.is_main:
            kept = kept_weights(trainer.config, state)
            if kept is None:
                with trainer.final_weights():  # the moving average with --ema; the checkpoint keeps both
                    save_weights(trainer.model, self.run_dir / "model.safetensors")
            else:
                save_tensors(kept, self.run_dir / "model.safetensors")
            atomic_write_json(self.run_dir / "kept.json", kept_record(trainer.config, state))
            record(self.run_dir, ["model.safetensors"])

    def has_checkpoint(self, state: TrainState) -> bool:
        last = latest_checkpoint(self.run_dir)
        return last is not None and last.name == f"step-{state.step:08d}"

    def checkpoint(self, trainer: Trainer, state: TrainState) -> None:
        rank_rng = gather_rng(trainer.dist) if trainer.dist.active else None  # every rank's dropout stream
        if trainer.dist.is_main:
            save_checkpoint(
                self.run_dir,
                trainer.model,
                trainer.optimizer,
                state.to_dict(),
                rank_rng=rank_rng,
                best_weights=state.best_weights,
                best_file=self._best_file(state),
            )
            self.write_record(state)

    def _best_file(self, state: TrainState) -> Path | None:
        """The file of the latest checkpoint that holds the best evaluation's weights, if one does (its own
        weights, or the copy beside them): the next checkpoint links to it instead of writing them again."""
        last, step = latest_checkpoint(self.run_dir), state.best_step
        if last is None or step is None:
            return None
        return last / ("model.safetensors" if last.name == f"step-{step:08d}" else best_file_name(step))


def lower_is_better(metric: str) -> bool:
    """Losses, perplexities and mean absolute errors fall as a model improves; accuracy, F1, BLEU rise."""
    return metric.endswith(("loss", "perplexity", "mae"))


def only_this_session_ends(trainer: Trainer, state: TrainState) -> bool:
    """Whether the training stops here for a pause (``--stop-at``) or a signal while the run itself goes
    on (no step limit or time budget reached): a ``--resume`` continues it, and a run never paused made
    no evaluation at this step."""
    if state.stop_reason is None:
        return False
    cfg = trainer.config
    if trainer.total_steps is not None and state.step >= trainer.total_steps:
        return False
    if trainer.time_left(state.elapsed) == 0.0:
        return False
    paused = cfg.stop_at is not None and state.step >= cfg.stop_at
    return paused or getattr(trainer, "interrupted_by", None) is not None  # a signal


def weights_copy(model: nn.Module) -> dict[str, torch.Tensor]:
    """A CPU copy of ``model``'s weights by name, tied weights once under their alphabetically first name,
    as ``save_weights`` (safetensors' ``save_model``) stores them, so both files hold the same names."""
    first: dict[int, tuple[str, torch.Tensor]] = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) not in first or name < first[id(tensor)][0]:
            first[id(tensor)] = (name, tensor)
    return {name: tensor.detach().to("cpu", copy=True) for name, tensor in first.values()}


def kept_weights(config: Any, state: TrainState) -> dict[str, torch.Tensor] | None:  # noqa: ANN401
    """The weights to keep at the end when they are not the model's own (the last step's): the best
    evaluation's, with ``keep_best``, when it was another step; else ``None``."""
    if not config.keep_best or state.best_step in (None, state.step):
        return None
    return state.best_weights


def kept_record(config: Any, state: TrainState) -> dict[str, Any]:  # noqa: ANN401
    """``kept.json``: which step's weights ``model.safetensors`` holds and why, beside the best and the last
    evaluation by the run's ``best_metric``."""
    metric = state.best_metric
    last: dict[str, Any] = next((r for r in reversed(state.history) if r.get("step") == state.step), {})
    best = kept_weights(config, state) is not None
    return {
        "weights": "best" if best else "last",
        "step": state.best_step if best else state.step,
        "metric": metric,
        "best_step": state.best_step,
        "best_value": state.best,
        "last_step": state.step,
        "last_value": last.get(metric) if metric else None,
        "evaluations": len(state.history),
        "keep_best": bool(config.keep_best),
    }


class KeepBest(Callback):
    """The best evaluation by ``metric`` (``state.best``, ``best_step``, and a CPU copy of its weights in
    ``state.best_weights``, which checkpoints keep beside theirs); with ``patience``, training stops
    once that many evaluations in a row have not improved it. ``restore`` puts the best weights back into
    the model at the end (``keep_best``), after the last checkpoint kept the last ones for ``--resume``.

    ``known`` are the metrics the task reports, when it says (an unknown ``metric`` is refused before the
    first step rather than at the first evaluation); what "better" means is ``better``'s. An evaluation
    made only because this session stops (``only_this_session_ends``) competes with none."""

    PATIENCE = ": --patience N ends a run after N evaluations without a better one"

    def __init__(
        self, metric: str, patience: int | None = None, known: tuple[str, ...] = (), eval_train: bool = False
    ) -> None:
        self.metric = metric if metric.startswith(("val_", "train_full_")) else f"val_{metric}"
        self.patience, self.lower = patience, lower_is_better(self.metric)
        if self.metric.startswith("train_full_") and not eval_train:
            raise ConfigError(f"--best-metric {metric} is a score of the training split, which only --eval-train makes")
        if known and self.metric.startswith("val_") and self.metric not in known:
            raise ConfigError(f"--best-metric {metric}: the evaluations of this run report {', '.join(known)}")

    def on_train_start(self, trainer: Trainer, state: TrainState) -> None:
        if state.best_metric != self.metric:  # a checkpoint of an earlier release: val_loss, without its weights
            if self.metric != "val_loss" or state.best_metric is not None:
                state.best, state.bad_evals = None, 0
            state.best_metric, state.best_step, state.best_weights = self.metric, None, None
        if state.best_step == state.step and state.best_weights is None:
            with trainer.final_weights():  # resumed at the best step: the model's own (its average with --ema)
                state.best_weights = weights_copy(trainer.model)

    def on_evaluate(self, trainer: Trainer, state: TrainState, record: dict[str, Any]) -> None:
        value = record.get(self.metric)
        if value is None:
            shown = ", ".join(k for k in record if k.startswith(("val_", "train_full_")))
            raise ConfigError(f"--best-metric {self.metric}: the evaluations of this run report {shown}")
        if only_this_session_ends(trainer, state):
            return  # a pause's evaluation competes with none: a paused and resumed run keeps what a straight one does
        if self.better(value, record, state):
            state.best, state.best_step, state.bad_evals = value, state.step, 0
            with trainer.final_weights():  # the weights the record scored (the moving average with --ema)
                state.best_weights = weights_copy(trainer.model)
        else:
            state.bad_evals += 1
        if self.patience and state.bad_evals >= self.patience and state.stop_reason is None:
            state.stop_reason = f"early stopping: {self.metric} did not improve for {self.patience} evaluations"

    def better(self, value: float, record: dict[str, Any], state: TrainState) -> bool:
        """Whether ``value`` beats the best so far; on a tie (accuracy and F1 on a small validation split
        often stay put) the lower validation loss wins, else the earlier step. NaN is never better."""
        if not math.isfinite(value):
            return False
        if state.best is None or (value < state.best if self.lower else value > state.best):
            return True
        if value != state.best or self.metric == "val_loss":
            return False
        best: dict[str, Any] = next((r for r in reversed(state.history) if r.get("step") == state.best_step), {})
        loss, best_loss = record.get("val_loss"), best.get("val_loss")
        return loss is not None and best_loss is not None and loss < best_loss

    def restore(self, trainer: Trainer, state: TrainState) -> None:
        """At the end: the best weights back into the model (``keep_best``), and one line saying which
        weights the run keeps."""
        if state.best_step is None or state.best is None:
            return
        kept = kept_weights(trainer.config, state)
        last = kept_record(trainer.config, state)["last_value"]
        best = f"{self.metric} {state.best + 0.0:.4f}"  # + 0.0: never "-0.0000"
        if state.best_step == state.step:
            trainer.log(f"the last step's weights are the best of {len(state.history)} evaluations: {best}")
        elif kept is None:
            trainer.log(
                f"kept the last step's weights (--no-keep-best); the best were step {state.best_step}'s: {best}"
            )
        else:
            load_model_tensors(trainer.model, kept)  # copied onto the model's device
            was = "" if last is None else f"; the last step's ({state.step}) was {last:.4f}"
            trainer.log(f"kept the weights of step {state.best_step}: {best}{was}")
            if 2 * state.best_step < state.step:  # most of the run did not help: say so, and what to do
                late, hint = state.step - state.best_step, "" if self.patience else self.PATIENCE
                trainer.log(
                    f"no evaluation of the last {late:,} steps ({late / state.step:.0%} of the run) beat"
                    f" step {state.best_step}'s, often a sign of a model learning its training data by heart{hint}"
                )

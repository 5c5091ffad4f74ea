"""The model-agnostic training loop.

A *task* (classifier, generator, seq2seq) supplies deterministic batches, a loss and metrics; the
trainer owns the optimizer, schedule, progress bar, evaluation, run directory and checkpoints.
Batches are a pure function of ``(seed, micro-batch number)`` and every RNG state is checkpointed,
so ``N`` steps straight and ``N/2`` + resume + ``N/2`` give bitwise-identical weights on CPU.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn

from .. import __version__
from ..config import Config
from ..summary import count_parameters
from ..atomic import atomic_write_json
from .checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint, save_weights
from .distributed import SINGLE, DistContext, all_reduce_sum, broadcast, gather_rng, same_weights_everywhere
from .optim import SCHEDULES, Schedule, make_optimizer, set_lr


class Task(Protocol):
    """What a task plugs into the trainer."""

    name: str

    def steps_per_epoch(self) -> int: ...  # micro-batches in one epoch
    def batch(self, index: int) -> Any: ...  # micro-batch number ``index``, deterministic
    def loss(self, model: nn.Module, batch: Any) -> Tensor: ...  # mean loss of a batch
    def evaluate(self, model: nn.Module) -> dict[str, float]: ...  # e.g. val_loss, val_accuracy
    def save(self, run_dir: Path) -> None: ...  # tokenizer(s)
    def describe(self) -> dict[str, Any]: ...  # data paths (with sha256) and task settings
    # optional: ``init_model(model)``, called once before the first step of a new (not resumed) run


@dataclass(frozen=True)
class TrainConfig:
    """Every training setting; saved in ``hyperparameters.json``."""

    lr: float = 1e-3
    weight_decay: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.99
    schedule: str = "cosine"
    warmup_steps: int = 100
    min_lr_ratio: float = 0.1
    grad_clip: float = 1.0  # 0 disables clipping
    accumulate: int = 1
    epochs: float | None = None
    max_steps: int | None = None
    max_minutes: float | None = None
    stop_at: int | None = None  # end this session at this step (checkpointed); the schedule keeps the full plan
    eval_every: int = 500  # optimizer steps; evaluation also runs at every epoch end
    checkpoint_every: int | None = None  # default: at every evaluation
    patience: int | None = None  # early stopping: evaluations without a better val_loss
    bf16: bool = False
    compile: bool = False
    seed: int = 0
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.schedule!r}; choose one of {SCHEDULES}")
        for name in ("accumulate", "eval_every"):
            if getattr(self, name) < (1 if name == "accumulate" else 0):
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.epochs is None and self.max_steps is None and self.max_minutes is None:
            raise ValueError("give at least one limit: epochs, max_steps or max_minutes")


class NonFiniteLoss(ValueError):
    pass


def _to(batch: Any, device: torch.device) -> Any:
    if isinstance(batch, Tensor) or hasattr(batch, "to"):
        return batch.to(device)
    if isinstance(batch, (tuple, list)):
        return type(batch)(_to(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: _to(v, device) for k, v in batch.items()}
    return batch


class Trainer:
    def __init__(self, model: nn.Module, task: Task, config: TrainConfig, run_dir: str | Path, model_config: Config,
                 *, resume: bool = False, extra: dict[str, Any] | None = None, log=print,  # noqa: ANN001
                 dist_ctx: DistContext = SINGLE) -> None:
        self.model, self.task, self.config = model, task, config
        self.run_dir, self.model_config = Path(run_dir), model_config
        self.resume, self.extra, self.dist = resume, extra or {}, dist_ctx
        self.log = log if dist_ctx.is_main else (lambda *_: None)
        self.device = torch.device(config.device)
        self.model.to(self.device)
        self.optimizer = make_optimizer(model, config.lr, config.weight_decay, (config.beta1, config.beta2))
        # one optimizer step consumes accumulate x ranks micro-batches
        self.steps_per_epoch = max(1, task.steps_per_epoch() // (config.accumulate * dist_ctx.world))
        limits = [config.max_steps] if config.max_steps is not None else []
        if config.epochs is not None:
            limits.append(math.ceil(config.epochs * self.steps_per_epoch))
        self.total_steps = min(limits) if limits else None
        horizon = self.total_steps or self.steps_per_epoch * 10  # cosine needs a horizon; a wall budget alone has none
        self.schedule = Schedule(config.schedule, config.lr, config.warmup_steps, horizon, config.min_lr_ratio)
        self.ddp = None
        if dist_ctx.active:
            from torch.nn.parallel import DistributedDataParallel

            ids = [self.device.index] if self.device.type == "cuda" else None
            self.ddp = DistributedDataParallel(model, device_ids=ids)
        wrapped = self.ddp if self.ddp is not None else model
        self.forward_model = torch.compile(wrapped) if config.compile else wrapped
        self._stop_requested = False

    # ----------------------------------------------------------------- files
    def _write_metadata(self) -> None:
        self.model_config.to_json(self.run_dir / "config.json")
        trainable, fixed = count_parameters(self.model)
        atomic_write_json(self.run_dir / "hyperparameters.json", {
            "task": self.task.name,
            "seed": self.config.seed,
            "train": asdict(self.config),
            "model": self.model_config.to_dict(),
            "data": self.task.describe(),
            "parameters": {"trainable": trainable, "non_trainable": fixed},
            "steps_per_epoch": self.steps_per_epoch,
            "total_steps": self.total_steps,
            "versions": {"transformers_lite": __version__, "torch": torch.__version__,
                         "python": platform.python_version()},
            "machine": {"processor": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                        "device": str(self.device)},
            "command": sys.argv,
            "distributed": {"world_size": self.dist.world,
                            "global_batch": f"per-rank batch x {self.dist.world} ranks x {self.config.accumulate}"},
            **self.extra,
        })
        self.task.save(self.run_dir)

    def _checkpoint(self, state: dict[str, Any]) -> None:
        rank_rng = gather_rng(self.dist) if self.dist.active else None  # every rank's dropout stream
        if self.dist.is_main:
            save_checkpoint(self.run_dir, self.model, self.optimizer, state, rank_rng=rank_rng)
            atomic_write_json(self.run_dir / "history.json", state["history"])

    # ----------------------------------------------------------------- loop
    def _evaluate(self, state: dict[str, Any], train_loss: float | None) -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        if self.dist.is_main:  # rank 0 scores the whole validation set; every rank gets its numbers
            self.model.eval()
            with torch.no_grad(), self._autocast():
                metrics = self.task.evaluate(self.model if self.dist.active else self.forward_model)
            self.model.train()
        metrics = broadcast(metrics, self.dist)
        record = {"step": state["step"], "epoch": round(state["step"] / self.steps_per_epoch, 4),
                  "wall_s": round(state["elapsed"], 2), "lr": self.schedule(max(state["step"] - 1, 0)),
                  "train_loss": train_loss, **metrics}
        state["history"].append(record)
        shown = " | ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in record.items()
                           if v is not None and k != "lr")
        self.log(shown)
        val = metrics.get("val_loss")
        if val is not None and (state["best"] is None or val < state["best"]):
            state["best"], state["bad_evals"] = val, 0
        else:
            state["bad_evals"] += 1
        return record

    def _autocast(self):  # noqa: ANN202
        if self.config.bf16:
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _on_sigint(self, signum, frame) -> None:  # noqa: ANN001
        if self._stop_requested:  # second Ctrl-C: stop at once
            raise KeyboardInterrupt
        self._stop_requested = True
        self.log("interrupt received: finishing this step and saving a checkpoint (Ctrl-C again to abort)")

    def fit(self) -> dict[str, Any]:
        """Train until a limit is reached; return the final state (step, history, ...)."""
        cfg = self.config
        state: dict[str, Any] = {"step": 0, "history": [], "best": None, "bad_evals": 0, "elapsed": 0.0}
        if self.resume:
            if latest_checkpoint(self.run_dir) is None:
                raise ValueError(f"{self.run_dir} has no complete checkpoint to resume from")
            loaded = load_checkpoint(self.run_dir, self.model, self.optimizer, rank=self.dist.rank)
            state.update({k: loaded[k] for k in state})
            self.log(f"resumed {self.run_dir} at step {state['step']}")
        else:
            init = getattr(self.task, "init_model", None)
            if init is not None:  # data-dependent initialisation (e.g. PPMI embeddings), before the first step
                init(self.model)
            torch.manual_seed(cfg.seed + 7919 * self.dist.rank)  # dropout stream of this run (and rank)
            if self.dist.is_main:
                self._write_metadata()
        previous = signal.signal(signal.SIGINT, self._on_sigint) if _main_thread() else None
        try:
            self._loop(state)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        return state

    def _loop(self, state: dict[str, Any]) -> None:
        cfg, model, task = self.config, self.model, self.task
        show_bar = sys.stderr.isatty() and self.dist.is_main
        world, rank = self.dist.world, self.dist.rank
        start = time.perf_counter() - state["elapsed"]
        kill_at = int(os.environ.get("TLITE_DEBUG_SIGKILL_AT_STEP", "0"))  # used by the resume/DDP tests only
        kill_rank = int(os.environ.get("TLITE_DEBUG_SIGKILL_RANK", str(rank)))
        model.train()
        run_sum, run_n = 0.0, 0
        bar = None
        reason = "limit reached"
        while self.total_steps is None or state["step"] < self.total_steps:
            step = state["step"]
            epoch = step // self.steps_per_epoch
            if bar is None and show_bar:
                from tqdm.auto import tqdm

                n_epochs = "?" if self.total_steps is None else math.ceil(self.total_steps / self.steps_per_epoch)
                bar = tqdm(total=self.steps_per_epoch, initial=step % self.steps_per_epoch,
                           desc=f"epoch {epoch + 1}/{n_epochs}", file=sys.stderr, leave=False, dynamic_ncols=True)
            set_lr(self.optimizer, self.schedule(step))
            batch_loss = 0.0
            for micro in range(cfg.accumulate):
                # rank r of W takes micro-batches g*W + r: together the ranks cover what one process
                # with accumulate x W would see
                batch = _to(task.batch((step * cfg.accumulate + micro) * world + rank), self.device)
                last_micro = micro == cfg.accumulate - 1
                sync = contextlib.nullcontext() if self.ddp is None or last_micro else self.ddp.no_sync()
                with sync:
                    with self._autocast():
                        loss = task.loss(self.forward_model, batch)
                        if cfg.accumulate > 1:
                            loss = loss / cfg.accumulate
                    loss.backward()
                batch_loss += loss.item()
            if self.dist.active:  # mean loss over ranks, and a stop vote so every rank stops together
                over_budget = cfg.max_minutes is not None and time.perf_counter() - start >= cfg.max_minutes * 60
                total, votes = all_reduce_sum([batch_loss, float(self._stop_requested or over_budget)], self.dist,
                                              self.device)
                batch_loss = total / world
                self._stop_requested = self._stop_requested or votes > 0
            if not math.isfinite(batch_loss):
                last = latest_checkpoint(self.run_dir)
                where = f"the last good checkpoint is {last}" if last else "no checkpoint was written yet"
                raise NonFiniteLoss(f"loss became {batch_loss} at step {step + 1}; training stopped, {where}")
            if cfg.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            state["step"] = step = step + 1
            state["elapsed"] = time.perf_counter() - start
            run_sum, run_n = run_sum + batch_loss, run_n + 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(mean_loss=f"{run_sum / run_n:.4f}", batch_loss=f"{batch_loss:.4f}", refresh=False)
            epoch_end = step % self.steps_per_epoch == 0
            last_step = self.total_steps is not None and step >= self.total_steps
            # under DDP the time budget was already voted on by all ranks before the optimizer step
            out_of_time = (not self.dist.active and cfg.max_minutes is not None
                           and state["elapsed"] >= cfg.max_minutes * 60)
            paused = cfg.stop_at is not None and step >= cfg.stop_at
            stop = self._stop_requested or out_of_time or paused
            evaluated = False
            if (cfg.eval_every and step % cfg.eval_every == 0) or epoch_end or last_step or stop:
                if bar is not None and (epoch_end or last_step or stop):
                    bar.close()
                    bar = None
                self._evaluate(state, run_sum / run_n)
                run_sum, run_n = 0.0, 0
                evaluated = True
            if (evaluated and cfg.checkpoint_every is None) or (cfg.checkpoint_every and step % cfg.checkpoint_every == 0):
                self._checkpoint(state)
            if kill_at and step == kill_at and rank == kill_rank:
                os.kill(os.getpid(), signal.SIGKILL)
            if cfg.patience is not None and state["bad_evals"] >= cfg.patience:
                reason = f"early stopping: val_loss did not improve for {cfg.patience} evaluations"
                break
            if stop:
                over = cfg.max_minutes is not None and state["elapsed"] >= cfg.max_minutes * 60
                if paused:
                    reason = f"paused (--stop-at {cfg.stop_at})"
                elif over:
                    reason = f"time budget of {cfg.max_minutes} minutes used"
                else:
                    reason = "interrupted"
                break
        if bar is not None:
            bar.close()
        last = latest_checkpoint(self.run_dir)
        if broadcast(last is None or last.name != f"step-{state['step']:08d}", self.dist):
            self._checkpoint(state)
        if self.dist.active:
            same = same_weights_everywhere(model, self.dist)
            self.log(f"weights identical on all {world} ranks: {same}")
            if not same:
                raise RuntimeError("DDP ranks ended with different weights")
        if self.dist.is_main:
            save_weights(model, self.run_dir / "model.safetensors")
        self.log(f"{reason} at step {state['step']} ({state['elapsed']:.1f} s); run saved in {self.run_dir}")
        state["stop_reason"] = reason


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def read_history(run_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "history.json"
    return json.loads(path.read_text()) if path.is_file() else []

"""The model-agnostic training loop, as small named steps with callbacks. It trains; it writes no file.

A *task* (``training.task``) supplies deterministic batches, a loss and metrics; the trainer owns the
optimizer, the schedule and evaluation; callbacks do the rest (the run directory's checkpoints and
weights are ``callbacks.Checkpointer``'s)::

    fit(state)  begin(state)             new run: data-dependent initialisation | resumed: the given state;
                                         the time budget's allowance (``limits.Deadline``)
                train_until(state)       repeat: train_step()   learning rate, micro-batches, backward, clip, step
                                                 after_step()   limits -> evaluate() -> callbacks (checkpoint, ...)
                finish(state)            on_train_end callbacks (final checkpoint, model.safetensors), then
                                         keep.restore(): the best evaluation's weights back into the model

``--preset auto``'s race calls ``begin`` once, then ``train_until(state, seconds)`` and ``evaluate`` for
each of its rounds; the winner goes on with ``fit(state)``, continuing where the race left it.

Batches are a pure function of ``(random seed, micro-batch number)`` and every RNG state is
checkpointed, so ``N`` steps straight and ``N/2`` + resume + ``N/2`` give bitwise-identical weights on CPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ..budget import Budget
from ..devices import compiled, resolve_device, to_device
from ..settings import TrainConfig
from .callbacks import Callback, KeepBest, ProgressBar
from .distributed import SINGLE, DistContext, all_reduce_sum, broadcast, same_weights_everywhere
from .ema import averaged, update_average
from .limits import TIMED_STEPS, Limits
from .optim import Schedule, fitted_warmup, make_optimizer, set_lr, warn_if_cut_short
from .signals import StopSignals
from .state import TrainState, random_streams, set_random_streams
from .task import Task


class NonFiniteLoss(ValueError):
    pass


class Trainer:
    def __init__(
        self,
        model: nn.Module,
        task: Task,
        config: TrainConfig,
        *,
        callbacks: Sequence[Callback] = (),
        log: Callable[[str], Any] = print,
        dist_ctx: DistContext = SINGLE,
        clock: Callable[[], float] = time.perf_counter,
        budget: Budget | None = None,
    ) -> None:
        """``budget``: the wall clock a time-budget run must end within (the command's: it began before the
        data was read); without it, ``max_minutes`` counts the training alone."""
        self.model, self.task, self.config = model, task, config
        self.dist, self.clock, self.budget = dist_ctx, clock, budget
        self.log = log if dist_ctx.is_main else (lambda *_: None)
        self.device = torch.device(resolve_device(config.device))
        self.model.to(self.device)
        plan = task.lr_plan(model)  # fine-tuning: per-layer rates
        self.optimizer = make_optimizer(
            model,
            config.lr,
            config.weight_decay,
            (config.beta1, config.beta2),
            plan=plan,
            kind=config.optimizer,
            muon_lr=config.muon_lr,
        )
        # one optimizer step consumes accumulate x ranks micro-batches
        self.steps_per_epoch = max(1, task.steps_per_epoch() // (config.accumulate * dist_ctx.world))
        self.signals = StopSignals(self.log)  # SIGINT/SIGTERM received: stop after this step
        self.limits = Limits(config, self.steps_per_epoch, self.signals, dist_ctx.active)
        self.total_steps, self.deadline = self.limits.total_steps, self.limits.deadline
        self.schedule = Schedule(
            config.schedule,
            config.lr,
            config.warmup_steps,
            self.total_steps,
            config.min_lr_ratio,
            self.deadline.allowed_s,
            config.cooldown,
        )
        # the best evaluation is known before the run's own callbacks (its checkpoint) see it
        metric = str(config.best_metric or getattr(task, "main_metric", "val_loss"))
        self.keep = KeepBest(metric, config.patience, getattr(task, "metrics", ()), config.eval_train)
        self.callbacks = [ProgressBar(), self.keep, *callbacks]
        self.ddp = None
        if dist_ctx.active:
            self.ddp = DistributedDataParallel(
                model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )
        wrapped = self.ddp if self.ddp is not None else model
        self.forward_model = compiled(wrapped, str(self.device)) if config.compile else wrapped
        self.last_lr = 0.0
        self._first_step = 0  # the step this session started from (begin sets it)
        self._start_clock = 0.0
        self._first_step_s = 0.0  # elapsed seconds at the end of step 1

    def fit_warmup_to_run(self) -> TrainConfig:
        """Before a new run's first step: shorten a warmup that would spend more than a quarter of the
        run (``fitted_warmup``). Returns the settings to record, so a resumed run keeps this warmup (a run
        recorded before keeps its own)."""
        fitted = fitted_warmup(self.config.warmup_steps, self.total_steps)
        if fitted != self.config.warmup_steps:
            self.config = dataclasses.replace(self.config, warmup_steps=fitted)
            self.schedule = dataclasses.replace(self.schedule, warmup_steps=fitted)
        return self.config

    # ----------------------------------------------------------------- the loop
    def fit(self, state: TrainState | None = None) -> TrainState:
        """Train until a limit is reached; return the final state (step, history, stop reason). ``state``
        continues a resumed run (its weights, optimizer and random streams restored by the caller) or a
        race's winner (``begin`` already called)."""
        with self.signals.installed():
            state = self.begin(state)
            self.train_until(state)
        return self.finish(state)

    def begin(self, state: TrainState | None = None) -> TrainState:
        """A session's start: the state (``start``), the time budget's allowance, the callbacks told, and
        the untrained model's evaluation when asked."""
        state = self.start(state)
        self.deadline.begin(state, self.budget)
        self.schedule = dataclasses.replace(self.schedule, budget_s=self.deadline.allowed_s)
        if state.warmup_steps is not None:  # fitted to the budget before a pause: the same schedule
            self.schedule = dataclasses.replace(self.schedule, warmup_steps=state.warmup_steps)
        self._first_step = state.step
        self._call("on_train_start", state)
        self._start_clock = self.clock() - state.elapsed
        if self.config.eval_at_start and state.step == 0 and not state.history:
            self.evaluate(state)  # the untrained model's scores: the curves start at step 0
        return state

    def train_until(self, state: TrainState, seconds: float | None = None) -> None:
        """Train until a limit stops the run (``state.stop_reason``) or, given ``seconds``, until that much
        more of the run's own time is spent (at least one step; a race's round)."""
        self._start_clock = self.clock() - state.elapsed  # the run's clock runs only while it trains
        until = None if seconds is None else state.elapsed + seconds
        state.stop_reason = self.limit_reason(state)
        while state.stop_reason is None:
            before = state.elapsed
            loss = self.train_step(state)
            self.deadline.warn_if_one_step_spends_it(state.elapsed - before)
            if loss is None:  # stopped between micro-batches: the step was not taken
                state.stop_reason = self.limit_reason(state)
                if not state.history or state.history[-1].get("step") != state.step:
                    self.evaluate(state)
                break
            self.after_step(state, loss)
            self._plan_the_budget(state)
            if until is not None and state.elapsed >= until:
                break

    def finish(self, state: TrainState) -> TrainState:
        """After the last step: the cut-short warnings, the final callbacks (checkpoint, weights), the best
        weights back into the model."""
        if not (state.stop_reason or "").startswith(("paused", "interrupted")):
            warn_if_cut_short(state, self.schedule.warmup_steps, self.config.lr, self.steps_per_epoch)
        if self.dist.active:
            same = same_weights_everywhere(self.model, self.dist)
            self.log(f"weights identical on all {self.dist.world} ranks: {same}")
            if not same:
                raise RuntimeError("DDP ranks ended with different weights")
        self._call("on_train_end", state)  # the last checkpoint keeps the last weights, for --resume
        self.keep.restore(self, state)
        self.log(f"{state.stop_reason} at step {state.step} ({state.elapsed:.1f} s)")
        return state

    def start(self, state: TrainState | None = None) -> TrainState:
        """``state`` as given (a resumed run), or a new run's: the model initialised from the data
        (e.g. PPMI embeddings) and this run's dropout stream seeded."""
        if state is not None:
            return state
        self.task.init_model(self.model)
        torch.manual_seed(self.config.seed + 7919 * self.dist.rank)  # dropout stream of this run (and rank)
        return TrainState(warmup_end_s=0.0 if self.config.warmup_steps == 0 else None)

    def train_step(self, state: TrainState) -> float | None:
        """One optimizer step over ``accumulate`` micro-batches; returns the mean loss (over ranks).

        Between micro-batches a stop signal or a spent time budget abandons the step (``None``): its
        gradients are dropped and the dropout stream rewound, so the checkpoint written next is the one
        an uninterrupted run had before this step, and resuming stays exact (one process only)."""
        cfg, step, world = self.config, state.step, self.dist.world
        self.last_lr = self.schedule(step, self.schedule.progress(step, state.elapsed, state.warmup_end_s))
        set_lr(self.optimizer, self.last_lr, step)
        batch_loss = 0.0
        rewind = random_streams(self.device) if cfg.accumulate > 1 and not self.dist.active else None
        for micro in range(cfg.accumulate):
            if micro and rewind is not None and self._must_stop_now(state.step > self._first_step):
                self.optimizer.zero_grad(set_to_none=True)
                set_random_streams(rewind, self.device)
                state.elapsed = self.clock() - self._start_clock
                return None
            # rank r of W takes micro-batches g*W + r: together the ranks cover what one process
            # with accumulate x W would see
            batch = to_device(self.task.batch((step * cfg.accumulate + micro) * world + self.dist.rank), self.device)
            last_micro = micro == cfg.accumulate - 1
            sync = contextlib.nullcontext() if self.ddp is None or last_micro else self.ddp.no_sync()
            with sync:
                with self._autocast():
                    loss = self.task.loss(self.forward_model, batch)
                    if cfg.accumulate > 1:
                        loss = loss / cfg.accumulate
                loss.backward()
            batch_loss += loss.item()
        if self.dist.active:  # mean loss over ranks, and a stop vote so every rank stops together
            wants_stop = self.signals.received is not None or self.deadline.over(self.clock() - self._start_clock)
            total, votes = all_reduce_sum([batch_loss, float(wants_stop)], self.dist, self.device)
            batch_loss, self.limits.stop_vote = total / world, votes > 0
        if not math.isfinite(batch_loss):
            raise NonFiniteLoss(f"loss became {batch_loss} at step {step + 1}; training stopped")
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        state.step += 1
        if cfg.ema:
            update_average(self.optimizer, cfg.ema, state.step)
        state.elapsed = self.clock() - self._start_clock
        if state.warmup_end_s is None and state.step >= self.schedule.warmup_steps:
            state.warmup_end_s = state.elapsed
        state.add_loss(batch_loss)
        if state.step == 1:
            self._first_step_s = state.elapsed  # the first step pays one-off costs: timed from its end
        return batch_loss

    def after_step(self, state: TrainState, loss: float) -> None:
        """Check the limits, log and evaluate when due, then let the callbacks act (checkpoint, stop, ...)."""
        state.stop_reason = self.limit_reason(state)
        if self.config.log_every and state.step % self.config.log_every == 0:
            row = self._row(state, "log")
            state.log.append(row)
            self._call("on_log", state, row)
        every = self.config.eval_every
        due = state.step % every == 0 if every else state.step % self.steps_per_epoch == 0
        if due or state.stop_reason is not None:
            self.evaluate(state)
        self._call("on_step_end", state, loss)

    def _plan_the_budget(self, state: TrainState) -> None:
        """After the first ``TIMED_STEPS`` of a new run with a time budget: its warmup fitted to the steps the
        budget buys (kept in the state, so a resumed run keeps it), and an evaluation now unless one was
        timed already, so the end's cost is known before it is due (``limits``)."""
        if state.step != TIMED_STEPS or state.warmup_steps is not None or self._first_step:
            return
        warmup = self.limits.planned_warmup(state, self._first_step_s, self.schedule.warmup_steps)
        if warmup is None:
            return
        state.warmup_steps = warmup
        self.schedule = dataclasses.replace(self.schedule, warmup_steps=warmup)
        if state.warmup_end_s is None and state.step >= warmup:
            state.warmup_end_s = state.elapsed  # the shorter warmup is over: the decay starts now
        evaluated = bool(state.history) and state.history[-1].get("step") == state.step
        if not (self.deadline.timed or evaluated or state.stop_reason):
            self.evaluate(state)

    def limit_reason(self, state: TrainState) -> str | None:
        """Why training must stop now, or ``None``: a limit, the time budget, a pause, a signal."""
        return self.limits.reason(state)

    def time_left(self, elapsed: float) -> float | None:
        """Seconds of training the time budget leaves before the run's end must begin (``None``: no budget)."""
        return self.deadline.left(elapsed)

    def _row(self, state: TrainState, window: str) -> dict[str, Any]:
        """Where training stands: a ``metrics.csv`` log row, or the start of a ``history.json`` record
        (the mean training loss since the last row of that kind)."""
        return {
            "step": state.step,
            "epoch": round(state.step / self.steps_per_epoch, 4),
            "wall_s": round(state.elapsed, 2),
            "lr": self.last_lr,
            "train_loss": state.mean_loss(window),
        }

    def _must_stop_now(self, stepped: bool) -> bool:
        """A signal, or a spent budget once this session has taken a step (a budget shorter than one
        step still trains one)."""
        over = stepped and self.deadline.over(self.clock() - self._start_clock)
        return self.signals.received is not None or over

    def evaluate(self, state: TrainState) -> dict[str, Any]:
        """Validation metrics on rank 0 (shared with every rank), one history row, one log line; its real
        duration, with what the callbacks wrote, is what the run's end is planned to cost."""
        began = time.perf_counter()
        metrics: dict[str, Any] = {}
        if self.dist.is_main:
            self.model.eval()
            with torch.no_grad(), self._autocast(), self.final_weights():
                model = self.model if self.dist.active else self.forward_model
                metrics = self.task.evaluate(model)
                if self.config.eval_train:
                    metrics.update(self.task.evaluate(model, split="train"))
            self.model.train()
        metrics = broadcast(metrics, self.dist)
        record = {**self._row(state, "eval"), **metrics}
        state.history.append(record)
        self.log(
            " | ".join(
                f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                for k, v in record.items()
                if v is not None and k != "lr"
            )
        )
        self._call("on_evaluate", state, record)
        # the loggers see the training loss once per step, from the log rows when there are any (metrics_log)
        self._call(
            "on_log", state, {k: v for k, v in record.items() if not (self.config.log_every and k == "train_loss")}
        )
        self.deadline.timed_end(time.perf_counter() - began)
        return record

    # ----------------------------------------------------------------- helpers
    def final_weights(self) -> contextlib.AbstractContextManager:
        """The weights a run is judged and saved by: the moving average with ``--ema``, else the weights."""
        return averaged(self.optimizer, enabled=bool(self.config.ema))

    def _call(self, event: str, *args: Any) -> None:  # noqa: ANN401
        for callback in self.callbacks:
            getattr(callback, event)(self, *args)

    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.config.bf16:
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    @property
    def interrupted_by(self) -> int | None:
        """The signal (SIGINT or SIGTERM) that stopped this run, if any."""
        return self.signals.received

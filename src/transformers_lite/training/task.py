"""``Task``: everything the trainer and a recipe ask of a model family's training — data, loss, metrics.

A task is built in two steps: ``Task.prepare(settings, config, seed, tokenizers)`` reads the data
files and builds the tokenizer (all the I/O), and the constructor only takes what ``prepare`` made, so
a task over data already in memory needs no file. The trainer calls ``steps_per_epoch``, ``batch``,
``loss``, ``evaluate``, ``init_model`` and ``lr_plan``; the recipe that writes a run calls
``model_config`` (the model fields the data decides), ``tokenizers`` and ``describe``.

Batches are a pure function of ``(random seed, micro-batch number)``, so resuming is exact.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from torch import Tensor, nn

from ..tokenizers import Tokenizer


class Task(Protocol):
    name: ClassVar[str]  # the model family
    Settings: ClassVar[type]  # its data settings (a frozen dataclass)

    def steps_per_epoch(self) -> int: ...  # micro-batches in one epoch
    def batch(self, index: int) -> Any: ...  # micro-batch number ``index``, deterministic  # noqa: ANN401
    def loss(self, model: nn.Module, batch: Any) -> Tensor: ...  # noqa: ANN401
    def evaluate(self, model: nn.Module, split: str = "val") -> dict[str, float]: ...  # {split}_loss, metrics
    def init_model(self, model: nn.Module) -> None: ...  # once, before the first step of a new run
    def lr_plan(self, model: nn.Module) -> dict[str, tuple[float, int]] | None: ...  # per-parameter (scale, frozen)
    def model_config(self, config: Any) -> Any: ...  # the config with the fields the data decides  # noqa: ANN401
    def tokenizers(self) -> dict[str, Tokenizer]: ...  # saved beside the weights, by file stem
    def describe(self) -> dict[str, Any]: ...  # data paths (with sha256), sizes and settings

    note: str  # one line on what was read from the data (columns, classes), printed as training starts
    main_metric: str  # the validation metric that picks the best evaluation unless --best-metric names one
    metrics: tuple[str, ...]  # the validation metrics ``evaluate`` reports (empty: not said)


class TaskBase:
    """Defaults for the optional parts of ``Task``: no data-dependent initialisation, one learning rate,
    nothing to say about the data, the best evaluation the one of the lowest validation loss."""

    note = ""
    main_metric = "val_loss"
    metrics: tuple[str, ...] = ()

    def init_model(self, model: nn.Module) -> None:
        pass

    def lr_plan(self, model: nn.Module) -> dict[str, tuple[float, int]] | None:
        return None

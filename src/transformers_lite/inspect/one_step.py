"""One optimizer step on one example, on a copy of the model: how the loss and the prediction move.

The step is the one training would take from a fresh optimizer on this example alone: AdamW with the
run's recorded learning rate, betas and weight decay (the first step of Adam moves each weight by
about the learning rate, in the direction against its gradient's sign). The copy is thrown away:
the run's weights and files are never touched.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from ..training.optim import make_optimizer
from .backward import trace_backward
from .inspection import InspectedRun

SHOWN = 8  # the probabilities that moved most


def one_step(run: InspectedRun, text: str, *, target: str | None = None, position: int | None = None) -> dict[str, Any]:  # noqa: ANN401
    """``{"lr", "loss_before", "loss_after", "moved", "at"}``: the example's loss before and after one
    AdamW step on it, and the probabilities that moved most (``at``: at the loss's last position, or of
    the classes). Without ``target``, the target the loss scored before (``Inspection.kept_target``: a
    classifier's prediction, a translator's translation) is scored after the step too."""
    train = run.hyperparameters.get("train", {})
    lr = float(train.get("lr", 1e-3))
    before = trace_backward(run, text, target=target, position=position)
    kept = target if target is not None else run.family.kept_target(run, before.forward)
    if target is None and kept is not None:  # score the same target text before and after the step
        before = trace_backward(run, text, target=kept, position=position)
    model = copy.deepcopy(run.model)
    optimizer = make_optimizer(
        model, lr, train.get("weight_decay", 0.01), (train.get("beta1", 0.9), train.get("beta2", 0.99))
    )
    for name, p in model.named_parameters():
        p.grad = before.params.get(name, torch.zeros_like(p)).clone()
    optimizer.step()
    copied = copy.copy(run)  # the same run with the stepped copy of its model
    copied.model = model
    after = trace_backward(copied, text, target=kept, position=position)
    return {
        "lr": lr,
        "optimizer": "AdamW, one step from a fresh state",
        "loss_before": before.loss,
        "loss_after": after.loss,
        "moved": _moved(run, before.forward, after.forward, position, before.rows),
        "at": _at(before.forward, position, before.rows),
    }


def _at(forward: Any, position: int | None, rows: list[int]) -> str:  # noqa: ANN401
    """Which output the moved probabilities are of, in words."""
    if forward["probabilities"].dim() < 2:
        return "the classes"
    row = position if position is not None else rows[-1]
    return f"the next token after position {row} ({forward.tokens[row]!r})"


def _moved(run: InspectedRun, before: Any, after: Any, position: int | None, rows: list[int]) -> list[dict[str, Any]]:  # noqa: ANN401
    """The entries of the output distribution whose probability changed most."""
    p0, p1 = before["probabilities"].float(), after["probabilities"].float()
    if p0.dim() == 2:  # (T, V): at the loss's position (the last predicting one by default)
        row = position if position is not None else rows[-1]
        p0, p1 = p0[row], p1[row]
    order = (p1 - p0).abs().argsort(descending=True)[:SHOWN].tolist()
    label = (lambda i: before.classes[i]) if before.classes else run.tokenizer.shown
    return [{"label": label(i), "before": round(float(p0[i]), 5), "after": round(float(p1[i]), 5)} for i in order]

"""One optimizer step on one example, on a copy of the model: how the loss and the prediction move.

The step is one training could take on this example alone, from a fresh optimizer: AdamW with the
run's recorded betas and weight decay, Muon on the blocks' matrices (AdamW on the rest), or plain SGD
(``w ← w − lr·∂L/∂w``) beside them; at the run's peak learning rate unless another is given. Adam's
first step moves every weight by about the learning rate against its gradient's sign, however small that
gradient (its two running means are the gradient and its square, so their ratio is ±1), where SGD moves
each weight in proportion to its gradient. The copy is thrown away: the run's weights and files are
never touched. Muon's first step moves each matrix by the orthogonalised gradient: ``spectra`` holds,
per matrix, the singular values of its gradient and of that update, so the page can show the update's
being flat where the gradient's fall off steeply.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from .. import validate
from ..runs.history import HistoryFileError, read_metrics
from ..settings import MUON_LR
from ..training.muon import newton_schulz
from ..training.optim import make_optimizer, muon_matrix
from .backward import trace_backward
from .inspection import InspectedRun

SHOWN = 8  # the probabilities that moved most


OPTIMIZERS = ("adamw", "muon", "sgd")
EXPLAINED = {
    "adamw": "AdamW, one step from a fresh state: each weight moves by about the learning rate against the sign "
    "of its gradient, however small the gradient (Adam's first step divides the gradient by its own size)",
    "muon": "Muon, one step from a fresh state: each matrix of a block moves by its gradient orthogonalised "
    "(every singular value set to about 1, so no direction dominates), the other parameters by AdamW",
    "sgd": "plain SGD: each weight moves by the learning rate times its gradient (w ← w − lr·∂L/∂w)",
}


def one_step(
    run: InspectedRun,
    text: str,
    *,
    target: str | None = None,
    position: int | None = None,
    optimizer: str = "adamw",
    lr: float | None = None,
) -> dict[str, Any]:
    """``{"lr", "peak_lr", "end_lr", "optimizer", "loss_before", "loss_after", "moved", "at", "updates"}``:
    the example's loss before and after one ``optimizer`` step on it (``adamw`` or ``sgd``) at ``lr``
    (default: the run's peak; ``end_lr``: the rate its training ended at, ``None`` when not recorded), the
    probabilities that moved most (``at``: at the loss's last position, or of the classes) and how far
    each parameter moved (``updates``: the norm of its change, largest first). Without ``target``, the
    target the loss scored before (``Inspection.kept_target``: a classifier's prediction, a translator's
    translation) is scored after the step too."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer={optimizer!r}: choose one of {', '.join(OPTIMIZERS)}")
    train = run.hyperparameters.get("train") or {}  # recorded values are checked as training checks them
    validate.number("lr", lr, 0, low_open=True, optional=True)  # the check TrainConfig applies to its lr
    peak = float(train.get("lr", 1e-3))
    rate = peak if lr is None else float(lr)
    before = trace_backward(run, text, target=target, position=position)
    kept = target if target is not None else run.family.kept_target(run, before.forward)
    if target is None and kept is not None:  # score the same target text before and after the step
        before = trace_backward(run, text, target=kept, position=position)
    model = copy.deepcopy(run.model)
    if optimizer == "sgd":
        step_with: torch.optim.Optimizer = torch.optim.SGD(model.parameters(), lr=rate)
    else:  # Muon's rate keeps its recorded ratio to the peak (its default when the run used AdamW)
        betas = (train.get("beta1", 0.9), train.get("beta2", 0.99))
        muon_lr = float(train.get("muon_lr", MUON_LR)) * rate / peak
        step_with = make_optimizer(model, rate, train.get("weight_decay", 0.01), betas, kind=optimizer, muon_lr=muon_lr)
    start = dict(run.model.named_parameters())  # the run's own weights: the copy is what moves
    for name, p in model.named_parameters():
        p.grad = before.params.get(name, torch.zeros_like(p)).clone()
    step_with.step()
    copied = copy.copy(run)  # the same run with the stepped copy of its model
    copied.model = model
    after = trace_backward(copied, text, target=kept, position=position)
    moved_by = {name: float((p.detach() - start[name].detach()).norm()) for name, p in model.named_parameters()}
    return {
        "lr": rate,
        "peak_lr": peak,
        "end_lr": _end_lr(run),
        "optimizer": EXPLAINED[optimizer],
        "loss_before": before.loss,
        "loss_after": after.loss,
        "moved": _moved(run, before.forward, after.forward, position, before.rows),
        "at": _at(before.forward, position, before.rows),
        "updates": [{"name": n, "norm": round(v, 8)} for n, v in sorted(moved_by.items(), key=lambda kv: -kv[1])],
        "spectra": _spectra(model, before.params) if optimizer == "muon" else [],
    }


def _spectra(model: torch.nn.Module, grads: dict[str, torch.Tensor]) -> list[dict[str, Any]]:
    """Per matrix Muon steps: the singular values of its gradient and of its first update (from a fresh
    momentum, the update is the orthogonalised gradient), largest first; largest gradient first."""
    out = []
    for name, p in model.named_parameters():
        g = grads.get(name)
        if g is None or not muon_matrix(name, p) or not bool(g.abs().sum()):
            continue
        out.append(
            {
                "name": name,
                "shape": list(p.shape),
                "gradient": [round(v, 6) for v in torch.linalg.svdvals(g.float()).tolist()],
                "update": [round(v, 6) for v in torch.linalg.svdvals(newton_schulz(g)).tolist()],
            }
        )
    return sorted(out, key=lambda s: -s["gradient"][0])


def _end_lr(run: InspectedRun) -> float | None:
    """The learning rate of the run's last recorded step (``metrics.csv``), ``None`` when there is none."""
    try:
        rows = read_metrics(run.run_dir)
    except (OSError, HistoryFileError, ValueError):
        return None
    rates = [lr for r in rows if (lr := r.get("lr")) is not None]
    return rates[-1] if rates else None


def _at(forward: Any, position: int | None, rows: list[int]) -> str:  # noqa: ANN401
    """Which output the moved probabilities are of, in words."""
    if forward["probabilities"].dim() < 2:
        return "the classes"
    row = position if position is not None else rows[-1]
    return f"the next token after position {row} ({forward.tokens[row]!r}){forward.where(row)}"


def _moved(run: InspectedRun, before: Any, after: Any, position: int | None, rows: list[int]) -> list[dict[str, Any]]:  # noqa: ANN401
    """The entries of the output distribution whose probability changed most."""
    p0, p1 = before["probabilities"].float(), after["probabilities"].float()
    if p0.dim() == 2:  # (T, V): at the loss's position (the last predicting one by default)
        row = position if position is not None else rows[-1]
        p0, p1 = p0[row], p1[row]
    order = (p1 - p0).abs().argsort(descending=True)[:SHOWN].tolist()
    label = (lambda i: before.classes[i]) if before.classes else run.tokenizer.shown
    return [{"label": label(i), "before": round(float(p0[i]), 5), "after": round(float(p1[i]), 5)} for i in order]

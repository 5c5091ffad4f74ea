"""A timeline of training: at step 0 and at every evaluation, a small snapshot of the model on a fixed
probe input from the validation data, so the inspector can scrub through training and show the
attention form, the per-token loss fall and the sample improve.

A snapshot (``RUN/snapshots/step-00001200.json``, written atomically) holds the step, the evaluation's
scores, the probe's tokens, every block's and head's attention over them (``(L, H, T, T)``; a translator's
cross-attention from its reference's tokens to the source, ``(L, H, T, S)``), the loss
of each next token (a generator), the class probabilities (a classifier) or the greedy translation (a
translator), a greedy sample (a generator), the 2-D map of the token embeddings, the norm per layer of
the gradient of the probe's loss (``grad_norms``: which layers the loss still pulls, and how hard), and
how far each layer's weights moved since the snapshot before (``update_norms``; the first snapshot of a
resumed run has none: the weights before it were not kept).

Snapshots cost little and stay bounded: they are taken when the run evaluates, and between evaluations
as often as ``TrainConfig.snapshots`` of them spread over the run need (a tenth of a 10-snapshot run's
steps or of its time budget), so a short run that evaluates twice still shows its model change; the
probe is at most ``PROBE_TOKENS`` tokens, and when a run holds more than ``TrainConfig.snapshots`` of
them the one closest to its neighbours is removed (the first and the last are kept), so a run keeps
``TrainConfig.snapshots`` of them. They read the model in evaluation
mode under ``no_grad`` and draw no random number (the sample is greedy), so resuming stays bitwise
exact. Each snapshot is written as it is taken, so the inspector shows a run's timeline while it trains,
step 0 first, before any checkpoint; a resumed run removes those taken after its checkpoint (that
stretch of training is done again, and they are taken again), and a new run that fails before its first
checkpoint has them removed with the rest of its files (``training.rundir.discard_unstarted``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..atomic import atomic_write_text
from ..generation.generate import generate
from ..generation.translate import DecodeSettings, decode_batch
from ..layers.trace import Trace
from ..runs.snapshots import FOLDER, step_of
from ..training.callbacks import Callback
from .scores import pca_2d, token_embeddings

PROBE_TOKENS = 24
SAMPLE_TOKENS = 48


class Timeline(Callback):
    """Snapshots of ``trainer.model`` on the task's first validation example (see the module docstring);
    ``probe(model, task)`` is the family's view of it (``Inspection.probe``)."""

    def __init__(self, run_dir: str | Path, task: Any, limit: int, probe: Callable[..., dict[str, Any]]) -> None:  # noqa: ANN401
        self.folder, self.task, self.limit, self.probe = Path(run_dir) / FOLDER, task, limit, probe
        self.previous: dict[str, Tensor] | None = None
        self.last = (-1, 0.0)  # the step and the elapsed seconds of the last snapshot

    def on_train_start(self, trainer: Any, state: Any) -> None:  # noqa: ANN401
        if self.limit and trainer.dist.is_main:
            for path in self.folder.glob("step-*.json"):  # taken after the checkpoint this run resumes from
                if step_of(path) > state.step:
                    path.unlink(missing_ok=True)
            if state.step == 0:
                self._write(self.snapshot(trainer.model, 0, {}))
        self.last = (state.step, state.elapsed)  # a resumed run counts from where it stopped

    def on_evaluate(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:  # noqa: ANN401
        if not self.limit or not trainer.dist.is_main:
            return
        scores = {k: v for k, v in record.items() if isinstance(v, float) and k != "lr"}
        with trainer.final_weights():  # the weights the scores are of (the moving average with --ema)
            self._write(self.snapshot(trainer.model, state.step, scores))
        self.last = (state.step, state.elapsed)

    def on_step_end(self, trainer: Any, state: Any, loss: float) -> None:  # noqa: ANN401
        """Between evaluations: a snapshot (without scores) each ``1/limit`` of the run's steps or of its
        time budget since the last one, whichever comes first."""
        if not self.limit or not trainer.dist.is_main or state.step == self.last[0]:
            return
        steps = trainer.total_steps // self.limit if trainer.total_steps else 0
        allowed = trainer.deadline.allowed_s  # the seconds of training the time budget allows
        due_by_steps = steps > 0 and state.step - self.last[0] > steps  # evaluations closer than that suffice
        due_by_time = allowed is not None and state.elapsed - self.last[1] > allowed / self.limit
        if due_by_steps or due_by_time:
            self._write(self.snapshot(trainer.model, state.step, {}))
            self.last = (state.step, state.elapsed)

    @torch.no_grad()
    def snapshot(self, model: Any, step: int, scores: dict[str, float]) -> dict[str, Any]:  # noqa: ANN401
        was_training = model.training
        model.eval()
        try:
            out = {"step": step, "scores": scores, **self.probe(model, self.task)}
            out["embeddings"] = _rounded(_signed(pca_2d(token_embeddings(model).cpu())), 3)
            weights = {n: p.detach().float().cpu().clone() for n, p in model.named_parameters()}
            if self.previous is not None:
                out["update_norms"] = _layer_norms({n: w - self.previous[n] for n, w in weights.items()})
            self.previous = weights
        finally:
            model.train(was_training)
        return out

    def _write(self, snapshot: dict[str, Any]) -> None:
        """The snapshot to its file (atomically: the inspector may read the folder meanwhile), then the
        folder thinned to ``limit``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.folder / f"step-{snapshot['step']:08d}.json", json.dumps(snapshot))
        self._thin()

    def _thin(self) -> None:
        """Down to ``limit`` snapshots, each time without the one that sits closest to its neighbours
        (the first and the last stay): the run keeps ``limit`` of them, spread as evenly as it can."""
        files = sorted(self.folder.glob("step-*.json"), key=step_of)
        while len(files) > max(self.limit, 2):
            steps = [step_of(p) for p in files]
            crowded = min(range(1, len(files) - 1), key=lambda i: (steps[i + 1] - steps[i - 1], i))
            files.pop(crowded).unlink(missing_ok=True)


def generator_probe(model: Any, task: Any) -> dict[str, Any]:  # noqa: ANN401
    """The first ``PROBE_TOKENS`` validation tokens: attention, the loss of each next token, the
    gradient norms of their mean loss, and a greedy sample from the first half."""
    device = next(model.parameters()).device
    trace = Trace()
    ids = task.val_ids[: min(PROBE_TOKENS, model.config.max_length)].to(device)  # (T,)
    with torch.enable_grad():
        logits = model(ids[None], trace=trace)[0]  # (T, V)
        losses = F.cross_entropy(logits[:-1].float(), ids[1:], reduction="none")  # position t predicts t + 1
        grad_norms = _gradient_norms(model, losses.mean())
    sample = [column[0] for column in generate(model, ids[: PROBE_TOKENS // 2], SAMPLE_TOKENS, temperature=0)]
    return {
        "tokens": [task.tokenizer.shown(i) for i in ids.tolist()],
        "attention": _attention(trace),
        "token_losses": _rounded(losses.detach(), 4),
        "sample": task.tokenizer.decode(ids[: PROBE_TOKENS // 2].tolist() + sample),
        "grad_norms": grad_norms,
    }


def classifier_probe(model: Any, task: Any) -> dict[str, Any]:  # noqa: ANN401
    """The first validation review: attention (of the first member), class probabilities, its label and
    the gradient norms of its loss."""
    device = next(model.parameters()).device
    trace = Trace()
    ids, valid = task.val_ids[:1].to(device), task.val_valid[:1].to(device)  # (1, T)
    n = int(valid[0].sum())
    with torch.enable_grad():
        logits = model(ids, valid, trace=trace)  # (1, K)
        grad_norms = _gradient_norms(model, task.loss_from_logits(logits, task.val_labels[:1].to(device)))
    logits = logits.detach().float()
    probs = torch.softmax(logits, -1)[0] if logits.shape[-1] > 1 else torch.sigmoid(logits)[0]
    return {
        "tokens": [task.tokenizer.shown(i) for i in ids[0, :n].tolist()],
        "attention": _attention(trace, n),
        "probabilities": _rounded(probs, 4),
        "label": int(task.val_labels[0]),
        "grad_norms": grad_norms,
    }


def translator_probe(model: Any, task: Any) -> dict[str, Any]:  # noqa: ANN401
    """The first validation pair: the greedy translation, and with the reference teacher-forced, every
    decoder block's cross-attention over the source (``(H, T_target, S)``), the loss of each next
    reference token and the gradient norms of their mean."""
    device = next(model.parameters()).device
    trace = Trace()
    pair = task.batch_of(task.val_src, task.val_tgt, [0]).to(device)
    with torch.enable_grad():
        logits = model(pair.src, pair.tgt_in, pair.src_valid, pair.tgt_valid, trace=trace)  # (1, T, V)
        losses = F.cross_entropy(logits[0].float(), pair.tgt_out[0], reduction="none")  # (T,)
        grad_norms = _gradient_norms(model, losses.mean())
    src = torch.tensor(task.val_src[0], device=device)  # (S,)
    out = decode_batch(model, src[None], task.tgt_tok.need("bos"), task.tgt_tok.need("eos"), DecodeSettings())[0]
    return {
        "tokens": [task.src_tok.shown(i) for i in src.tolist()],
        "source": task.src_tok.decode(src.tolist()),
        "target_tokens": [task.tgt_tok.shown(i) for i in pair.tgt_in[0].tolist()],  # BOS + the reference
        "attention": [_rounded(trace[name][0], 2) for name in trace.find(role="cross weights")],
        "token_losses": _rounded(losses, 3),
        "translation": task.tgt_tok.decode(out),
        "grad_norms": grad_norms,
    }


def _gradient_norms(model: Any, loss: Tensor) -> dict[str, float]:  # noqa: ANN401
    """The norm per layer of ``loss``'s gradient; ``autograd.grad`` leaves the parameters' ``.grad`` (the
    training step's) alone."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, [p for _, p in named], allow_unused=True)
    return _layer_norms({n: g for (n, _), g in zip(named, grads) if g is not None})


def _attention(trace: Trace, n: int | None = None) -> list:
    """Every block's ``(H, T, T)`` self-attention weights (the first ``n`` tokens: a classifier's padding left
    out); an ensemble's of its first member alone (its members' heads do not correspond)."""
    names = trace.find(role="weights")
    first = trace.records[names[0]].place.member if names else ""
    return [_rounded(trace[name][0][:, :n, :n], 2) for name in trace.find(role="weights", member=first)]


def _signed(points: Tensor) -> Tensor:
    """Each axis turned so that its largest coordinate is positive: a map that does not flip between snapshots."""
    flip = torch.sign(points.gather(0, points.abs().argmax(0, keepdim=True)))  # (1, 2)
    return points * torch.where(flip == 0, torch.ones_like(flip), flip)


def _layer_norms(deltas: dict[str, Tensor]) -> dict[str, float]:
    """Norm per layer of a change or a gradient (parameters grouped by name up to their last part)."""
    groups: dict[str, float] = {}
    for name, delta in deltas.items():
        layer = name.rsplit(".", 1)[0]
        groups[layer] = groups.get(layer, 0.0) + float(delta.pow(2).sum())
    return {k: round(v**0.5, 6) for k, v in groups.items()}


def _rounded(t: Tensor, digits: int) -> Any:  # noqa: ANN401
    return (t.detach().double().cpu() * 10**digits).round().div(10**digits).tolist()

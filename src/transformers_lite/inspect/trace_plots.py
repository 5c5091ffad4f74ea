"""``tlite inspect trace``: the forward trace of one input as JSON and one PNG per block (its steps as
heatmaps, one head's Q, K, V, scores, softmax weights and output beside the block's residual stream)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from ..atomic import atomic_write_text
from ..numbers import json_text
from ..optional import installed
from .forward import ForwardTrace
from .plots import _label, _pyplot, _save


def write_trace(
    trace: ForwardTrace, report: dict[str, Any], out: Path, head: int = 0, plots: bool = True
) -> list[Path]:
    """``trace.json`` (the ``report`` of ``trace``: ``report.trace_report``) and, with matplotlib,
    ``trace_<block>.png`` per block for ``head``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "trace.json", json_text(report))
    written = [out / "trace.json"]
    if plots and installed("matplotlib"):
        written += [_block_figure(trace, scope, head, out) for scope in trace.blocks()]
    return written


def _block_figure(trace: ForwardTrace, scope: str, head: int, out: Path) -> Path:
    traced = trace.traced
    names = [n for n in trace.select(scope) if traced[n].place.block == scope and trace[n].dim() >= 2]
    plt = _pyplot()
    cols = 4
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    tokens = [_label(t) for t in trace.tokens]
    for ax, name in zip(axes.flat, names):
        t = trace[name].float()
        step = name[len(scope) + 1 :]
        if traced[name].step.axes[0] == "H":  # one head's
            t = t[head]
            step = f"{step} (head {head})"
        t = t.masked_fill(t <= torch.finfo(t.dtype).min, float("nan"))  # −∞ (masked): left blank
        if t.nan_to_num(0).min() < 0:  # signed values: white at zero, red positive, blue negative
            bound = float(t.nan_to_num(0).abs().max()) or 1.0
            colors = dict(cmap="RdBu_r", vmin=-bound, vmax=bound)
        else:
            colors = dict(cmap="viridis")
        ax.imshow(t.numpy(), aspect="auto", interpolation="nearest", **colors)
        ax.set_title(f"{step} {tuple(t.shape)}", fontsize=9)
        if len(tokens) == t.shape[0] and len(tokens) <= 40:
            ax.set_yticks(range(len(tokens)), tokens, fontsize=6)
        else:
            ax.set_yticks([])
        ax.set_xticks([])
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.suptitle(f"{scope}: rows are positions (T), columns channels or keys", fontsize=11)
    fig.tight_layout()
    return _save(fig, out / f"trace_{scope.replace('.', '_')}.png")

"""Muon's cost per step on the CPU: the project's float32 Newton–Schulz against ``torch.optim.Muon``.

Both step the same matrices (a preset's blocks, with random gradients) from the same state; the
optimizer steps are timed alternately in one process (only ratios measured so compare), and each is
set beside AdamW on the same matrices and beside one whole training step of the preset, so the share
of a step that Muon adds is visible. The agreement between the two (the largest difference of the
updates, relative to their size) says how much bfloat16 changes the step.

    .venv/bin/python benchmarks/bench_muon.py                      # baby-gpt
    .venv/bin/python benchmarks/bench_muon.py --preset small-gpt --repeats 30
    python3 benchmarks/bench_muon.py --device cuda                # on a GPU
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from common import emit

from transformers_lite import build_model, get_preset
from transformers_lite.training.muon import Muon
from transformers_lite.training.optim import muon_matrix


def _timed(fn, device: torch.device) -> float:  # noqa: ANN001
    if device.type == "cuda":  # a GPU runs asynchronously: time from an idle device to an idle device
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="baby-gpt")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda: where the matrices live")
    args = parser.parse_args()
    device = torch.device(args.device)
    recipe = get_preset(args.preset)
    torch.manual_seed(0)
    cfg = recipe.model.replace(vocab_size=65)
    model = build_model(cfg).to(device)
    matrices = [p for n, p in model.named_parameters() if muon_matrix(n, p)]
    for p in matrices:
        p.grad = torch.randn_like(p)
    copies = {name: [torch.nn.Parameter(p.detach().clone()) for p in matrices] for name in ("ours", "torch", "adamw")}
    for ps in copies.values():
        for p, q in zip(ps, matrices, strict=True):
            p.grad = q.grad.clone()
    optimizers = {
        "ours": Muon([{"params": copies["ours"], "muon": True}], lr=0.02),
        "adamw": torch.optim.AdamW(copies["adamw"], lr=1e-3),
    }
    if hasattr(torch.optim, "Muon"):
        optimizers["torch"] = torch.optim.Muon(copies["torch"], lr=0.02, momentum=0.95, nesterov=True, weight_decay=0.0)
    batch = recipe.data.batch_size
    ids = torch.randint(0, 65, (batch, cfg.max_length + 1), device=device)

    def train_step() -> None:
        logits = model(ids[:, :-1])  # (B, T, V)
        F.cross_entropy(logits.reshape(-1, 65), ids[:, 1:].reshape(-1)).backward()

    times: dict[str, list[float]] = {name: [] for name in [*optimizers, "forward+backward"]}
    for i in range(args.repeats + 2):  # two untimed rounds first
        for name, opt in optimizers.items():
            t = _timed(opt.step, device)
            if i >= 2:
                times[name].append(t)
        t = _timed(train_step, device)
        if i >= 2:
            times["forward+backward"].append(t)
    median = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
    agreement = None
    torch.set_grad_enabled(False)
    if "torch" in optimizers:  # one step each from a fresh state on the same gradients (no autograd)
        fresh = [torch.nn.Parameter(p.detach().clone()) for p in matrices]
        other = [torch.nn.Parameter(p.detach().clone()) for p in matrices]
        for p, q, g in zip(fresh, other, matrices, strict=True):
            p.grad, q.grad = g.grad.clone(), g.grad.clone()
        Muon([{"params": fresh, "muon": True}], lr=1.0).step()
        torch.optim.Muon(other, lr=1.0, momentum=0.95, nesterov=True, weight_decay=0.0).step()
        # the updates (after - before): the largest difference relative to our update's size
        agreement = max(
            float((a - b).norm() / (a - g).norm())
            for a, b, g in zip(fresh, other, matrices, strict=True)  # noqa: B023
        )
    emit(
        benchmark="muon",
        preset=args.preset,
        device=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        matrices=len(matrices),
        median_ms={k: round(v, 3) for k, v in median.items()},
        muon_share_of_a_step=round(median["ours"] / (median["forward+backward"] + median["adamw"]), 3),
        torch_muon_relative_difference=None if agreement is None else round(agreement, 4),
        repeats=args.repeats,
    )


if __name__ == "__main__":
    main()

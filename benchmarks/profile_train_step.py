"""Where a training step of the project's generator spends its time.

    .venv/bin/python benchmarks/profile_train_step.py [--size d128] [--steps 20] [--dropout P] [--explicit]

Trains the side-by-side benchmark's model (``bench_vs_reference.py``, same shape and batches) for
``--steps`` steps under ``torch.profiler`` and groups the operators' own CPU time: matrix products,
the fused attention kernel, the activation, and everything else (LayerNorm, AdamW, gradient clipping,
copies, bookkeeping). Also times 2048 x 2048 products, the machine's reference speed, and prints the
speed the step's matrix products reached, and the step's tokens/s (timed outside the profiler,
median of 3). ``--dropout`` replaces the size's dropout; ``--explicit`` takes attention's explicit path
(products, softmax, dropout written out) instead of the fused kernel. One JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vs_reference import SIZES, VOCAB, project, train_block  # noqa: E402
from common import MACHINE  # noqa: E402

GROUPS = {
    "aten::mm": "matmul",
    "aten::addmm": "matmul",
    "aten::bmm": "matmul",
    "aten::gelu": "activation",
    "aten::gelu_backward": "activation",
}


def peak_gflops() -> float:
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(10):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * 2048**3 / sorted(times)[len(times) // 2] / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=tuple(SIZES), default="d128")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--dropout", type=float, help="instead of the size's dropout")
    parser.add_argument("--explicit", action="store_true", help="attention's explicit path, not the fused kernel")
    args = parser.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    size = SIZES[args.size] if args.dropout is None else dict(SIZES[args.size], dropout=args.dropout)
    model, optimizer = project(size)
    for block in model.blocks:
        block.attention.record_weights = args.explicit  # the explicit path keeps the weights; costs the same math
    data = torch.randint(0, VOCAB, (args.steps, size["batch"], size["block_size"] + 1))
    batches = [(d[:, :-1].contiguous(), d[:, 1:].contiguous()) for d in data]  # (B, T) inputs and targets
    train_block(model, optimizer, batches[:3], False)  # warm-up
    tokens = args.steps * size["batch"] * size["block_size"]
    rate = tokens / sorted(train_block(model, optimizer, batches, False) for _ in range(3))[1]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        train_block(model, optimizer, batches, False)
    shares: dict[str, float] = defaultdict(float)
    for event in prof.key_averages():
        name = event.key
        group = GROUPS.get(name, "attention" if "scaled_dot_product" in name else "other")
        shares[group] += event.self_cpu_time_total / 1e6  # seconds
    total = sum(shares.values())
    non_embedding = sum(p.numel() for n, p in model.named_parameters() if "embedding" not in n)
    matmul_flops = 6 * non_embedding * size["batch"] * size["block_size"] * args.steps  # forward 2, backward 4
    print(
        json.dumps(
            {
                "benchmark": "train-step-profile",
                "size": args.size,
                "dropout": size["dropout"],
                "attention": "explicit" if args.explicit else "fused",
                "tokens_per_s": round(rate),
                "share_pct": {k: round(100 * v / total, 1) for k, v in sorted(shares.items())},
                "matmul_gflops": round(matmul_flops / shares["matmul"] / 1e9, 1),
                "peak_gflops_2048": round(peak_gflops(), 1),
                "machine": MACHINE,
            }
        )
    )


if __name__ == "__main__":
    main()

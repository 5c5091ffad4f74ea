"""Post 000's lesson on batched multiplication, timed: loops versus the built-in batched kernel.

    .venv/bin/python benchmarks/bench_matmul.py [--json]

Sizes are the post's: a 100 x 100 product (mul2d), 32 products of 100 x 100 (mul3d), and the attention
scores of post 000's classifier, batch 32 x 4 heads of (50 x 8) @ (8 x 50) (mul4d). Each figure is the
median of several calls; the Python triple loop is timed on fewer calls (it takes a while).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

from transformers_lite.backprop.loops import mul2d, mul3d, mul4d


def timed(fn, *args, repeats: int) -> float:  # noqa: ANN001
    fn(*args)  # warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    cases = [
        ("mul2d: (100 x 100) @ (100 x 100)", mul2d, (torch.randn(100, 100), torch.randn(100, 100)), 3),
        ("mul3d: 32 x (100 x 100) @ (100 x 100)", mul3d, (torch.randn(32, 100, 100), torch.randn(32, 100, 100)), 50),
        ("mul4d: 32 x 4 x (50 x 8) @ (8 x 50)", mul4d, (torch.randn(32, 4, 50, 8), torch.randn(32, 4, 8, 50)), 50),
    ]
    rows = []
    for name, loop, operands, repeats in cases:
        loop_s = timed(loop, *operands, repeats=repeats)
        batched_s = timed(torch.matmul, *operands, repeats=200)
        assert torch.allclose(loop(*operands), torch.matmul(*operands), atol=1e-4)
        rows.append(
            {"case": name, "loops_ms": loop_s * 1e3, "batched_ms": batched_s * 1e3, "ratio": loop_s / batched_s}
        )
    machine = {"machine": platform.machine(), "cpus": torch.get_num_threads(), "torch": torch.__version__}
    for row in rows:
        if args.json:
            print(json.dumps({**row, **machine}))
        else:
            print(
                f"{row['case']:<40} loops {row['loops_ms']:9.3f} ms   torch.matmul {row['batched_ms']:8.4f} ms   "
                f"{row['ratio']:8.1f}x"
            )


if __name__ == "__main__":
    main()

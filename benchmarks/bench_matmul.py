"""Post 000's lesson on batched multiplication, timed: loops versus the built-in batched kernel.

    .venv/bin/python benchmarks/bench_matmul.py [--json]

Sizes: a 100 x 100 product (mul2d), 32 products of 100 x 100 (mul3d), the attention scores of post
000's classifier, batch 32 x 4 heads of (50 x 8) @ (8 x 50) (mul4d), and the post's own mul4d time test,
``randn(50, 50, 12, 32)`` times the same: 32 x 12 products of (50 x 50) @ (50 x 50). Each figure is the
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
        # the post's own time test: randn(50, 50, 12, 32) @ the same, column-major (n, m, heads, batch) ->
        # row-major (batch, heads, n, m) = (32, 12, 50, 50)
        ("mul4d, post's timing: 32 x 12 x (50 x 50) @ (50 x 50)", mul4d, (torch.randn(32, 12, 50, 50),) * 2, 20),
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
                f"{row['case']:<56} loops {row['loops_ms']:9.3f} ms   torch.matmul {row['batched_ms']:8.4f} ms   "
                f"{row['ratio']:8.1f}x"
            )


if __name__ == "__main__":
    main()

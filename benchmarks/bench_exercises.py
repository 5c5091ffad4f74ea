"""`tlite exercise check` targets: each exercise checked in well under a second, in float64 on the CPU.

    .venv/bin/python benchmarks/bench_exercises.py [--text input.txt]

For the built-in model and for a baby-gpt run (trained one step on tiny Shakespeare: the speed does
not depend on training), the time to take each exercise's tensors from the forward pass and check the
reference solution against PyTorch or autograd (the median of 5), after one warm-up round; one JSON
line per model with the slowest exercise, and the time to trace the forward pass once.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from common import DATA, emit

import transformers_lite as tl
from transformers_lite.exercises import EXERCISES, Source
from transformers_lite.exercises.checker import check


def timings(source: Source) -> dict[str, float]:
    """Milliseconds per exercise: its inputs taken and its reference checked (median of 5)."""
    out = {}
    for e in EXERCISES:
        check(e, e.solution, e.inputs(source))  # warm-up
        times = []
        for _ in range(5):
            start = time.perf_counter()
            verdict = check(e, e.solution, e.inputs(source))
            times.append(1000 * (time.perf_counter() - start))
            assert verdict.passed, (e.name, verdict.message)
        out[e.name] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", default=str(DATA / "tinyshakespeare" / "input.txt"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tl.get_preset("baby-gpt").override(text=args.text, max_steps=1, eval_every=1000).run(
            Path(tmp) / "gpt", log=lambda *_: None
        )
        for what, run in (("built-in", None), ("baby-gpt", tl.load(Path(tmp) / "gpt"))):
            start = time.perf_counter()
            source = Source(run)
            traced_ms = 1000 * (time.perf_counter() - start)
            ms = timings(source)
            slowest = max(ms, key=ms.get)
            emit(
                benchmark="exercise-check",
                model=what,
                exercises=len(ms),
                trace_ms=round(traced_ms, 1),
                slowest=slowest,
                slowest_ms=round(ms[slowest], 1),
                median_ms=round(statistics.median(ms.values()), 1),
                target_ms=1000,
            )


if __name__ == "__main__":
    main()

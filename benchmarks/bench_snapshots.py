"""What the training timeline costs: the share of a 2-minute run's time spent taking its snapshots (the
default, 16), and how many it keeps for the replay, on tiny Shakespeare.

    .venv/bin/python benchmarks/bench_snapshots.py [--preset baby-gpt] [--minutes 2] [--rounds 2]

Each round trains the preset for the wall-clock budget with every snapshot timed as it is taken (the
probe's forward and backward, the greedy sample, the embedding map, the weights kept for the next
update norms, and the file written): the cost is that time over the training's. Two runs of one
setting differ by more than the cost itself on a shared 2-core machine (the steps each reaches vary by
several per cent), so the time is measured where it is spent rather than read off the steps. Targets:
at least 12 snapshots kept, at most 3 % of the time. One JSON line per round.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import DATA, emit

import transformers_lite as tl
from transformers_lite.inspect.timeline import Timeline
from transformers_lite.runs.snapshots import read_timeline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", default=str(DATA / "tinyshakespeare" / "input.txt"))
    parser.add_argument("--preset", default="baby-gpt")
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    spent: list[float] = []
    taking = Timeline.snapshot
    writing = Timeline._write

    def timed(function):  # noqa: ANN001, ANN202
        def call(self, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
            start = time.perf_counter()
            try:
                return function(self, *a, **k)
            finally:
                spent.append(time.perf_counter() - start)

        return call

    Timeline.snapshot, Timeline._write = timed(taking), timed(writing)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            spent.clear()
            run_dir = Path(tmp) / f"r{r}"
            recipe = tl.get_preset(args.preset).override(
                text=args.text, max_minutes=args.minutes, max_steps=None, seed=r
            )
            start = time.perf_counter()
            recipe.run(run_dir, log=lambda *_: None)
            wall = time.perf_counter() - start
            emit(
                benchmark="timeline-cost",
                preset=args.preset,
                minutes=args.minutes,
                snapshots_taken=len(spent) // 2,
                snapshots_kept=len(read_timeline(run_dir)),
                seconds_in_snapshots=round(sum(spent), 2),
                wall_s=round(wall, 1),
                share_pct=round(100 * sum(spent) / wall, 2),
            )


if __name__ == "__main__":
    main()

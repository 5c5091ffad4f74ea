"""What the training timeline costs: a 2-minute run with its snapshots (the default, 16) against the same
run without (``--snapshots 0``), alternating, on tiny Shakespeare.

    .venv/bin/python benchmarks/bench_snapshots.py [--preset baby-gpt] [--minutes 2] [--rounds 2]

Each round trains the preset for the same wall-clock budget twice, once each way, in this process (the
order alternates between rounds), and reads the steps each reached: the cost is how many fewer steps
the run with snapshots took in the same minutes. It also counts the snapshots the run kept, which the
replay shows (the target: at least 12, at most 3 % fewer steps). One JSON line per round and one for
the median.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import tempfile
from pathlib import Path

from common import DATA, emit

import transformers_lite as tl
from transformers_lite.runs.snapshots import read_timeline


def steps_of(run_dir: Path) -> int:
    """The last step the run logged (``metrics.csv``'s last row)."""
    with open(run_dir / "metrics.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return int(rows[-1]["step"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", default=str(DATA / "tinyshakespeare" / "input.txt"))
    parser.add_argument("--preset", default="baby-gpt")
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    costs = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            reached, kept = {}, 0
            for snapshots in (16, 0) if r % 2 == 0 else (0, 16):
                run_dir = Path(tmp) / f"r{r}-s{snapshots}"
                recipe = tl.get_preset(args.preset).override(
                    text=args.text, max_minutes=args.minutes, snapshots=snapshots, max_steps=None
                )
                recipe.run(run_dir, log=lambda *_: None)
                reached[snapshots] = steps_of(run_dir)
                if snapshots:
                    kept = len(read_timeline(run_dir))
            cost = 1 - reached[16] / reached[0]
            costs.append(cost)
            emit(
                benchmark="timeline-cost",
                preset=args.preset,
                minutes=args.minutes,
                steps_without=reached[0],
                steps_with=reached[16],
                fewer_steps_pct=round(100 * cost, 2),
                snapshots_kept=kept,
            )
    emit(benchmark="timeline-cost-median", preset=args.preset, fewer_steps_pct=round(100 * statistics.median(costs), 2))


if __name__ == "__main__":
    main()

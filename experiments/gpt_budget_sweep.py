"""Which model size is best for a time budget: the character GPT at several sizes × budgets on tiny
Shakespeare, each trained through the user's own command and scored on the whole validation split.

    .venv/bin/python experiments/gpt_budget_sweep.py                          # every size x budget, seed 0
    .venv/bin/python experiments/gpt_budget_sweep.py --presets baby-gpt small-gpt --minutes 5 15 --seeds 0 1 2

Each cell runs ``tlite train generator --text input.txt --preset P --max-minutes M --seed S``
(so a cell measures exactly what a user gets), then ``tlite evaluate RUN --json`` for the validation
loss (the last 10 % of the text). One JSON line per cell: preset, parameters, minutes, steps, loss. As in
compute-optimal training, the question per budget is which size reaches the lowest loss: a larger model
learns more per step but gets fewer steps. Run it on a quiet machine, one cell at a time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from common import DATA, emit  # noqa: E402

TEXT = DATA / "tinyshakespeare" / "input.txt"
TLITE = [sys.executable, "-m", "transformers_lite"]
PRESETS = ("post-gpt", "baby-gpt", "small-gpt")  # 44 k, 0.8 M and 2.7 M parameters (tlite summary NAME)


def cell(preset: str, minutes: float, seed: int, folder: Path) -> dict:
    """Train one preset for ``minutes`` and score it on the validation split."""
    out = folder / f"{preset}-{minutes:g}min-seed{seed}"
    command = [*TLITE, "train", "generator", "--text", str(TEXT), "--preset", preset]
    command += ["--max-minutes", str(minutes), "--seed", str(seed), "--out", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    scores = json.loads(
        subprocess.run([*TLITE, "evaluate", str(out), "--json"], check=True, capture_output=True).stdout
    )
    history = json.loads((out / "history.json").read_text())
    recorded = json.loads((out / "hyperparameters.json").read_text())
    return {
        "preset": preset,
        "parameters": recorded["parameters"]["trainable"],
        "minutes": minutes,
        "seed": seed,
        "steps": history[-1]["step"] if history else None,
        "val_loss": round(scores["loss"], 4),
        "command": " ".join(["tlite", *command[3:-2]]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--minutes", nargs="+", type=float, default=[2, 5, 15])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--keep", metavar="DIR", help="keep the runs in DIR (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        for minutes in args.minutes:
            for preset in args.presets:
                for seed in args.seeds:
                    emit(**cell(preset, minutes, seed, folder))


if __name__ == "__main__":
    main()

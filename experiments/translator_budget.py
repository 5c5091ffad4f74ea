"""The translator in a time budget: recipes x minutes x seeds on Multi30k, each trained through the
user's own command and scored with beam 4 on the whole validation split, with its time-to-BLEU curve.

    .venv/bin/python experiments/translator_budget.py                                  # every recipe, 30 min, seed 0
    .venv/bin/python experiments/translator_budget.py --recipes default --seeds 0 1 2
    .venv/bin/python experiments/translator_budget.py --recipes default adamw --minutes 30   # Muon vs AdamW
    .venv/bin/python experiments/translator_budget.py --score outputs/mt-a outputs/mt-b   # runs you already have

Each cell runs ``tlite train seq2seq --max-minutes M --seed S`` plus the recipe's options (so a cell
measures exactly what a user gets), then ``tlite evaluate RUN --beam 4 --json`` on Multi30k's validation
pairs. One JSON line per cell: the recipe, its options, steps, epochs, BLEU and chrF, and ``curve``: the
greedy BLEU on the first 200 validation sentences at each epoch's end against wall-clock minutes (what
training itself records in ``history.json``). Run it on a quiet machine, one cell at a time.
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

PAIRS = DATA / "multi30k"
TLITE = [sys.executable, "-m", "transformers_lite"]
RECIPES = {  # the options of each recipe
    # seq2seq-budget (what --max-minutes starts from): seq2seq-small's model, 2,048-token batches and 4,000-token
    # joint BPE, the budget its only limit, Muon on the blocks' matrices (at 0.01, the GPTs' rate), AdamW on the rest
    "default": [],
    "adamw": ["--optimizer", "adamw"],  # the same with AdamW on every parameter
    # an earlier default: AdamW, twice the tokens per batch, an 8,000-token joint BPE
    "previous-default": ["--optimizer", "adamw", "--max-tokens", "4096", "--vocab-size", "8000"],
}


def score(out: Path) -> dict:
    """Beam-4 BLEU and chrF of the run ``out`` on the validation pairs, its steps, epochs and curve."""
    command = [*TLITE, "evaluate", str(out), "--src", str(PAIRS / "val.de.gz"), "--ref", str(PAIRS / "val.en.gz")]
    scores = json.loads(subprocess.run([*command, "--beam", "4", "--json"], check=True, capture_output=True).stdout)
    history = json.loads((out / "history.json").read_text())
    evaluated = [h for h in history if "val_bleu" in h]
    return {
        "steps": history[-1]["step"] if history else None,
        "epochs": round(history[-1].get("epoch", 0), 2) if history else None,
        "bleu": round(scores["bleu"], 2),
        "chrf": round(scores["chrf"], 2),
        "curve": [[round(h["wall_s"] / 60, 1), round(h["val_bleu"], 2)] for h in evaluated if "wall_s" in h],
    }


def cell(recipe: str, minutes: float, seed: int, folder: Path) -> dict:
    """Train one recipe for ``minutes`` and score it."""
    out = folder / f"{recipe}-{minutes:g}min-seed{seed}"
    command = [*TLITE, "train", "seq2seq", *RECIPES[recipe], "--max-minutes", str(minutes), "--seed", str(seed)]
    subprocess.run([*command, "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    command_shown = " ".join(["tlite", *command[3:]])
    return {"recipe": recipe, "minutes": minutes, "seed": seed, **score(out), "command": command_shown}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--minutes", nargs="+", type=float, default=[30])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--keep", metavar="DIR", help="keep the runs in DIR (default: a temporary folder)")
    parser.add_argument("--score", nargs="+", metavar="RUN", help="only score these runs (no training)")
    args = parser.parse_args()
    if args.score:
        for run in args.score:
            emit(run=run, **score(Path(run)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        for minutes in args.minutes:
            for recipe in args.recipes:
                for seed in args.seeds:
                    emit(**cell(recipe, minutes, seed, folder))


if __name__ == "__main__":
    main()

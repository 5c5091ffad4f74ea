"""`make demo`: train a character GPT on tiny Shakespeare for about two minutes, then show what it
learned: validation perplexity, a generated sample, and inspection plots. The model's size is chosen
for the two minutes on this machine (`--preset auto`): a busy machine gets a smaller model that still
learns in the steps it can take, and the first line of training says what was chosen and why.

Each step is a `tlite` command, printed before it runs, so you can re-run or vary any of them.
Data: $TLITE_DATA_DIR (a folder laid out like ../shared/data), else ../shared/data next to the
repository, else the user cache (downloaded on first use).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

from transformers_lite.cli.main import main as tlite
from transformers_lite.data import sources

ROOT = Path(__file__).resolve().parents[1]


def text_path() -> Path:
    shared = ROOT.parent / "shared" / "data"
    if "TLITE_DATA_DIR" not in os.environ and shared.is_dir():
        os.environ["TLITE_DATA_DIR"] = str(shared)
    try:
        return sources.resolve("tinyshakespeare", "input.txt")
    except FileNotFoundError:
        print("tiny Shakespeare not found locally; downloading it (1.1 MB)...")
        return sources.download("tinyshakespeare")[0]


def step(*args: str) -> None:
    print(f"\n$ tlite {shlex.join(args)}", flush=True)
    code = tlite(list(args))
    if code:
        sys.exit(code)


def main() -> None:
    minutes = os.environ.get("DEMO_MINUTES", "2")
    run = ROOT / "outputs" / f"demo_{time.strftime('%Y%m%d_%H%M%S')}"
    step(
        "train",
        "generator",
        "--text",
        str(text_path()),
        "--preset",
        "auto",
        "--max-minutes",
        minutes,
        "--out",
        str(run),
    )
    step("evaluate", str(run))
    step(
        "generate",
        str(run),
        "--prompt",
        "ROMEO:",
        "--max-new-tokens",
        "400",
        "--temperature",
        "0.8",
        "--top-k",
        "40",
        "--seed",
        "1",
    )
    last_block = json.loads((run / "config.json").read_text())["n_blocks"] - 1
    step("inspect", "all", str(run), "--block", str(last_block), "--head", "0")
    print(
        f"\nThe run (weights, history.json, hyperparameters.json) is in {run}\n"
        f"Plots: {run / 'plots'} (attention map, next-character bars, position similarity, embeddings)\n"
        f"See it compute and learn in the browser: .venv/bin/tlite serve {run.parent}  (then open the run: its\n"
        "forward pass step by step, the backward pass with the hand-derived gradients, the training timeline)"
    )


if __name__ == "__main__":
    main()

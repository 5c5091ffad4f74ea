"""Review classifier results on MARC (issue 5): TF-IDF baseline, seed-faithful and default transformer.

    .venv/bin/python benchmarks/bench_classifier.py [--only NAME] [--out outputs/reviews]

Trains on train.jsonl (12,456 reviews), evaluates on the official dev split (5,000 reviews; the
test split is kept aside). Each transformer row is the `tlite train classifier` command printed
with it, followed by `tlite evaluate RUN --data dev.jsonl --json`. Prints one JSON line per row.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import time
from pathlib import Path

import torch

from transformers_lite.cli.main import main as tlite
from transformers_lite.evaluation.baselines import tfidf_baseline
from transformers_lite.evaluation.evaluate import evaluate_classifier
from transformers_lite.training.checkpoint import load

DATA = Path(os.environ.get("TLITE_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
TRAIN = DATA / "amazon_reviews_multi_en" / "train.jsonl"
DEV = DATA / "amazon_reviews_multi_en" / "dev.jsonl"
VOCAB = DATA / "amazon_reviews_vocab" / "amazon_reviews_train_en.txt"
MACHINE = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"

SEED = ["--preset", "seed-classifier", "--vocab", str(VOCAB), "--epochs", "10", "--lr", "1e-3",
        "--schedule", "constant", "--warmup-steps", "0", "--weight-decay", "0", "--grad-clip", "0"]
DEFAULT = ["--vocab", str(VOCAB)]  # the `classifier` preset and the task's training defaults
RUNS = {
    "seed-5": (SEED, 5), "seed-2": (SEED, 1),
    "default-5": (DEFAULT, 5), "default-2": (DEFAULT, 2),
}


def transformer(name: str, out: Path) -> dict:
    args, labels = RUNS[name]
    run = out / name
    cmd = ["train", "classifier", "--train", str(TRAIN), "--val", str(DEV), "--labels", str(labels), *args,
           "--eval-every", "0", "--out", str(run)]
    print(f"# tlite {shlex.join(cmd)}", flush=True)
    start = time.perf_counter()
    if tlite(cmd):
        raise SystemExit(f"training {name} failed")
    seconds = time.perf_counter() - start
    loaded = load(run)
    result, _ = evaluate_classifier(loaded, DEV)
    history = json.loads((run / "history.json").read_text())
    best = max(history, key=lambda h: h["val_accuracy"])
    return {"model": name, "labels": labels, "dev_accuracy": round(result["accuracy"], 4),
            "dev_macro_f1": round(result["macro_f1"], 4), "best_epoch_accuracy": round(best["val_accuracy"], 4),
            "best_epoch": best["epoch"], "parameters": loaded.hyperparameters["parameters"]["trainable"],
            "train_seconds": round(seconds, 1), "run": str(run), "machine": MACHINE}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=[*RUNS, "tfidf"], action="append")
    parser.add_argument("--out", type=Path, default=Path("outputs/reviews"))
    args = parser.parse_args()
    wanted = args.only or ["tfidf", *RUNS]
    for name in wanted:
        if name == "tfidf":
            for labels in (5, 2):
                start = time.perf_counter()
                r = tfidf_baseline(TRAIN, DEV, labels)
                print(json.dumps({"model": "tfidf", "labels": labels, "dev_accuracy": round(r["accuracy"], 4),
                                  "dev_macro_f1": round(r["macro_f1"], 4), "parameters": r["parameters"],
                                  "train_seconds": round(time.perf_counter() - start, 1), "machine": MACHINE}),
                      flush=True)
        else:
            print(json.dumps(transformer(name, args.out)), flush=True)


if __name__ == "__main__":
    main()

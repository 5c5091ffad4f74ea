"""Review classifier results on MARC: TF-IDF baseline, the post's own setup and the default transformer.

    .venv/bin/python benchmarks/bench_classifier.py [--only NAME] [--seeds 0,1,2] [--out outputs/reviews]

Trains on train.jsonl (12,456 reviews), evaluates on the official dev split (5,000 reviews; the
test split is kept aside). Each transformer row is the `tlite train classifier` command printed
with it (once per seed), followed by `tlite evaluate RUN --data dev.jsonl --json`; its line gives
the mean over the posts and every seed's value. Three TF-IDF rows: `tlite baseline tfidf`'s defaults
(words, 5,000 features, C = 1), a version tuned on dev like the transformer (word bigrams, 20,000
features, C = 2), and `tlite baseline tfidf-svm` (word and character n-grams, linear SVM). Prints one JSON line per row.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import time
from pathlib import Path

from common import DATA, MACHINE

from transformers_lite import load
from transformers_lite.cli.main import main as tlite
from transformers_lite.evaluation.baselines import score_baseline
from transformers_lite.evaluation.evaluate import evaluate_classifier
from transformers_lite.tasks.classifier import read_splits
from transformers_lite.tasks.classifier_settings import ClassifierSettings

TRAIN = DATA / "amazon_reviews_multi_en" / "train.jsonl"
DEV = DATA / "amazon_reviews_multi_en" / "dev.jsonl"
VOCAB = DATA / "amazon_reviews_vocab" / "amazon_reviews_train_en.txt"
# post 000's own setup (Adam 1e-3 constant, batch 32, 10 epochs, reviews padded with the unknown word) on its
# model, with the posts' 6,653-word vocabulary
POST = ["--preset", "post-classifier-original", "--vocab", str(VOCAB)]
DEFAULT: list[str] = []  # the `classifier` preset and the task's defaults (vocabulary: document frequency >= 2)
# the default before PPMI embeddings: random embeddings, the posts' 6,653 words, 6 epochs
RANDOM = ["--embedding-init", "random", "--vocab", str(VOCAB), "--epochs", "6"]
# the default's ablation: one classifier without word-pair vectors (the default before the ensemble), and
# one classifier with them
SINGLE = ["--set", "members=1", "--set", "bigram_buckets=0"]
BIGRAMS = ["--set", "members=1"]
RUNS = {
    "post-5": (POST, 5),
    "post-2": (POST, 1),
    "default-5": (DEFAULT, 5),
    "default-2": (DEFAULT, 2),
    "single-5": (SINGLE, 5),
    "single-2": (SINGLE, 2),
    "bigrams-5": (BIGRAMS, 5),
    "bigrams-2": (BIGRAMS, 2),
    "random-init-5": (RANDOM, 5),
    "random-init-2": (RANDOM, 2),
}
# row -> (the `tlite baseline` name, its settings)
TFIDF = {
    "tfidf": ("tfidf", {}),
    "tfidf-bigrams": ("tfidf", {"ngram_max": 2, "max_features": 20000, "c": 2.0}),
    "tfidf-svm": ("tfidf-svm", {}),
}


def transformer(name: str, out: Path, seed: int) -> dict:
    args, labels = RUNS[name]
    run = out / f"{name}-seed{seed}"
    cmd = [
        "train",
        "classifier",
        "--train",
        str(TRAIN),
        "--val",
        str(DEV),
        "--labels",
        str(labels),
        *args,
        "--seed",
        str(seed),
        "--out",
        str(run),
    ]
    print(f"# tlite {shlex.join(cmd)}", flush=True)
    start = time.perf_counter()
    if tlite(cmd):
        raise SystemExit(f"training {name} failed")
    seconds = time.perf_counter() - start
    loaded = load(run)
    result, _ = evaluate_classifier(loaded, DEV)
    history = json.loads((run / "history.json").read_text())
    best = max(history, key=lambda h: h["val_accuracy"])
    return {
        "model": name,
        "seed": seed,
        "labels": labels,
        "dev_accuracy": round(result["accuracy"], 4),
        "dev_macro_f1": round(result["macro_f1"], 4),
        "best_epoch_accuracy": round(best["val_accuracy"], 4),
        "best_epoch": best["epoch"],
        "parameters": loaded.hyperparameters["parameters"]["trainable"],
        "train_seconds": round(seconds, 1),
        "run": str(run),
        "machine": MACHINE,
    }


def mean_over_seeds(rows: list[dict]) -> dict:
    out = {"model": rows[0]["model"], "labels": rows[0]["labels"], "seeds": [r["seed"] for r in rows]}
    for key in ("dev_accuracy", "dev_macro_f1", "train_seconds"):
        out[key] = round(statistics.mean(r[key] for r in rows), 4)
        out[f"{key}_per_seed"] = [r[key] for r in rows]
    return {**out, "parameters": rows[0]["parameters"], "machine": MACHINE}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=[*RUNS, *TFIDF], action="append")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated training seeds per transformer row")
    parser.add_argument("--out", type=Path, default=Path("outputs/reviews"))
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    wanted = args.only or [*TFIDF, *RUNS]
    for name in wanted:
        if name in TFIDF:
            for labels in (5, 2):
                start = time.perf_counter()
                kind, settings = TFIDF[name]
                splits = read_splits(ClassifierSettings(train=str(TRAIN), val=str(DEV), labels=labels))
                train, val = (splits.train.texts, splits.train.labels), (splits.val.texts, splits.val.labels)
                r = score_baseline(kind, train, val, max(labels, 2), **settings)
                print(
                    json.dumps(
                        {
                            "model": name,
                            "labels": labels,
                            "dev_accuracy": round(r["accuracy"], 4),
                            "dev_macro_f1": round(r["macro_f1"], 4),
                            "parameters": r["parameters"],
                            "settings": settings,
                            "train_seconds": round(time.perf_counter() - start, 1),
                            "machine": MACHINE,
                        }
                    ),
                    flush=True,
                )
        else:
            rows = [transformer(name, args.out, seed) for seed in seeds]
            for row in rows:
                print(f"# {json.dumps(row)}", flush=True)
            print(json.dumps(mean_over_seeds(rows)), flush=True)


if __name__ == "__main__":
    main()

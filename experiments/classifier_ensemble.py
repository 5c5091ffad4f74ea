"""Two small-data options for the review classifier, measured on runs already trained:
checkpoint averaging (the mean of the weights of a run's last checkpoints, epochs 2 and 3 by default)
and an ensemble over random seeds (the mean of the class probabilities of several runs).

    .venv/bin/python experiments/classifier_ensemble.py --data DEV.jsonl RUN_SEED0 RUN_SEED1 RUN_SEED2

The README's figures come from runs of one classifier (`tlite train classifier ... --seed N --set members=1`,
with `--set bigram_buckets=0` for the runs without word pairs); the default `classifier` preset is
itself an ensemble trained as one model (`members`).

Prints one JSON line per run (accuracy and macro-F1 of the final weights and of the averaged
checkpoints) and one for the ensemble of the runs (final weights, and averaged checkpoints).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

import transformers_lite as tl
from transformers_lite.data.reviews import load_reviews, task_labels
from transformers_lite.evaluation.metrics import accuracy, confusion_matrix, macro_f1
from transformers_lite.evaluation.prediction import classify_texts
from transformers_lite.runs.files import load_model_tensors
from transformers_lite.runs.legacy import rename_state


def scores(labels: np.ndarray, probs: np.ndarray) -> dict[str, float]:
    preds = probs.argmax(1)
    return {
        "accuracy": round(accuracy(labels, preds), 4),
        "macro_f1": round(macro_f1(confusion_matrix(labels, preds, probs.shape[1])), 4),
    }


def averaged_checkpoints(run: tl.Run) -> torch.nn.Module:
    """The run's model with the mean weights of every checkpoint it kept."""
    folders = sorted((run.run_dir / "checkpoint").glob("step-*"))
    states = [rename_state(load_file(f / "model.safetensors"), run.family) for f in folders]  # any release's names
    mean = {k: sum(s[k] for s in states) / len(states) for k in states[0]}
    model = tl.build_model(run.config)
    load_model_tensors(model, mean)
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--data", required=True, help="labelled reviews to score (the dev split)")
    args = parser.parse_args()
    final, averaged = [], []
    labels = None
    for path in args.runs:
        run = tl.load(path)
        reviews = load_reviews(args.data)
        labels, kept = task_labels(reviews.stars, run.config.n_labels)
        texts = [reviews.texts[i] for i in kept]
        final.append(classify_texts(run.model, run.tokenizer, texts))
        averaged.append(classify_texts(averaged_checkpoints(run), run.tokenizer, texts))
        print(
            json.dumps({"run": str(path), "final": scores(labels, final[-1]), "averaged": scores(labels, averaged[-1])})
        )
    print(
        json.dumps(
            {
                "ensemble_of": len(args.runs),
                "final": scores(labels, np.mean(final, axis=0)),
                "averaged": scores(labels, np.mean(averaged, axis=0)),
            }
        )
    )


if __name__ == "__main__":
    main()

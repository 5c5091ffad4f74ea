"""The classifier's evaluation plots (post 000): confusion matrix, predicted-probability bars per
true star, training curves, and for binary models the predictions on the dropped 3-star reviews."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import ClassifierConfig
from ..evaluation.prediction import class_names
from . import plots
from .curves import write_training_curves


def write_classifier_plots(
    run_dir: Path, config: ClassifierConfig, arrays: dict[str, np.ndarray], out: Path | None = None
) -> list[Path]:
    """PNGs from ``evaluate_classifier``'s arrays, written to ``out`` (default: the run directory)."""
    out = Path(out or run_dir)
    names = class_names(config)
    k = len(names)
    labels, probs, matrix = arrays["labels"], arrays["probs"], arrays["matrix"]
    written = []
    rates = matrix / np.maximum(matrix.sum(1, keepdims=True), 1)
    written.append(
        plots.heatmap(
            rates,
            names,
            names,
            out / "confusion_matrix.png",
            "confusion matrix: counts\n(colour: share of each true class)",
            xlabel="predicted",
            ylabel="true",
            cmap="Blues",
            vmin=0,
            vmax=1,
            counts=matrix,
        )
    )
    mean_probs = np.stack([probs[labels == c].mean(0) if (labels == c).any() else np.zeros(k) for c in range(k)])
    written.append(
        plots.grouped_bars(
            names,
            [f"p({n})" for n in names],
            mean_probs,
            out / "probabilities_by_true_class.png",
            "mean predicted probability per true class",
            "true class",
            "probability",
        )
    )
    if (Path(run_dir) / "metrics.csv").is_file() or (Path(run_dir) / "history.json").is_file():
        written.append(write_training_curves(run_dir, out))
    if "stars" in arrays:
        stars, star_probs = arrays["stars"], arrays["star_probs"]
        present = [s for s in range(1, 6) if (stars == s).any()]
        written.append(
            plots.grouped_bars(
                [f"{s} star{'s' if s > 1 else ''}" for s in present],
                [f"p({n})" for n in names],
                np.stack([star_probs[stars == s].mean(0) for s in present]),
                out / "probabilities_by_star.png",
                "binary model: mean predicted probability per true star (3 stars never trained on)",
                "true stars",
                "probability",
            )
        )
    if "neutral_probs" in arrays:
        written.append(
            plots.histogram(
                arrays["neutral_probs"][:, 1],
                out / "three_star_predictions.png",
                "binary model on the dropped 3-star reviews",
                "p(positive)",
            )
        )
    return written

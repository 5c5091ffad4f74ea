"""The classifier's pictures: the confusion matrix carries its counts."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from transformers_lite.config import ClassifierConfig  # noqa: E402
from transformers_lite.inspect import classifier_plots, plots  # noqa: E402


def test_the_confusion_matrix_shows_its_counts(tmp_path, monkeypatch):
    drawn = {}
    real = plots._save

    def keep_texts(fig, path):  # noqa: ANN001
        drawn[path.name] = [t.get_text() for ax in fig.axes for t in ax.texts]
        return real(fig, path)

    monkeypatch.setattr(plots, "_save", keep_texts)
    config = ClassifierConfig(n_labels=3, label_names=("a", "b", "c"))
    labels = np.array([0, 0, 0, 1, 2, 2])
    probs = np.eye(3)[[0, 0, 1, 1, 2, 0]]
    matrix = np.array([[2, 1, 0], [0, 1, 0], [1, 0, 1]])
    written = classifier_plots.write_classifier_plots(
        tmp_path, config, {"labels": labels, "probs": probs, "matrix": matrix}
    )
    assert (tmp_path / "confusion_matrix.png").read_bytes()[:4] == b"\x89PNG" and written
    assert drawn["confusion_matrix.png"] == ["2", "1", "0", "0", "1", "0", "1", "0", "1"]  # row by row


def test_a_matrix_too_large_for_digits_has_none(tmp_path, monkeypatch):
    drawn, real = [], plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, path: drawn.append(len(fig.axes[0].texts)) or real(fig, path))
    plots.heatmap(np.ones((31, 31)), list("x" * 31), list("y" * 31), tmp_path / "m.png", "m", counts=np.ones((31, 31)))
    assert drawn == [0]

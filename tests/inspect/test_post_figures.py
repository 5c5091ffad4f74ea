"""The posts' figures: each command writes its PNG, from data checked elsewhere or here."""

import json

import pytest

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.inspect.post_figures import (
    write_position_comparison,
    write_run_comparison,
    write_sinusoid,
)

from ..helpers import tlite

pytest.importorskip("matplotlib")


def is_png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sinusoid_and_position_comparison_figures(tmp_path):
    heat, waves = write_sinusoid(32, 50, tmp_path)
    assert is_png(heat) and is_png(waves)
    model = build_model(GeneratorConfig(vocab_size=10, max_length=16, dim=8, n_heads=2, dim_hidden=16, n_blocks=1))
    assert is_png(write_position_comparison(model, tmp_path))


def test_sinusoid_dots_lie_on_their_curves_at_the_posts_positions(tmp_path, monkeypatch):
    """The table holds positions j = 1..L (the post counts from 1): each dot sits on its sine curve and
    the heatmap's first column is labelled 1."""
    import numpy as np

    from transformers_lite.inspect import plots

    figures, labels = [], []
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig) or save(fig, path))
    heatmap = plots.heatmap
    monkeypatch.setattr(
        plots, "heatmap", lambda data, rows, cols, *a, **kw: labels.append(cols) or heatmap(data, rows, cols, *a, **kw)
    )
    write_sinusoid(16, 30, tmp_path)
    assert labels[0][0] == "1" and labels[0][-1] == "30"
    lines = figures[-1].axes[0].get_lines()
    curves, dots = lines[0::2], lines[1::2]
    for curve, dot in zip(curves, dots, strict=True):
        x, y = np.asarray(dot.get_xdata(), float), np.asarray(dot.get_ydata(), float)
        assert x[0] == 1 and x[-1] == 30
        fx, fy = np.asarray(curve.get_xdata(), float), np.asarray(curve.get_ydata(), float)
        assert np.allclose(np.interp(x, fx, fy), y, atol=0.05)  # on the curve (400 samples, linear interpolation)


def test_run_comparison_plots_training_and_validation_curves(tmp_path):
    for name, rows in (("a", [0.5, 0.6]), ("b", [0.4, 0.7])):
        run = tmp_path / name
        run.mkdir()
        history = [
            {"step": s, "train_full_accuracy": v + 0.1, "val_accuracy": v, "val_loss": 1 - v}
            for s, v in zip((0, 10), rows)
        ]
        (run / "history.json").write_text(json.dumps(history))
    assert is_png(write_run_comparison([tmp_path / "a", tmp_path / "b"], "accuracy", tmp_path))
    with pytest.raises(ValueError, match="no run has a val_bleu"):
        write_run_comparison([tmp_path / "a"], "bleu", tmp_path)


def test_the_figure_commands(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("First Citizen:\nBefore we proceed any further, hear me speak.\n" * 40)
    reviews = tmp_path / "r.jsonl"
    reviews.write_text("".join(json.dumps({"review_body": "good " * n, "stars": 5}) + "\n" for n in range(1, 30)))
    result = tlite("data", "stats", text, "--plot", tmp_path, "--json")
    stats = json.loads(result.stdout.splitlines()[0])
    assert stats["unique_words"] == 10 and stats["most_frequent"][0][1] == 40
    assert is_png(tmp_path / "character_frequencies.png")
    result = tlite("data", "lengths", reviews, "--plot", tmp_path, "--json")
    assert json.loads(result.stdout.splitlines()[0])["reviews"] == 29 and is_png(tmp_path / "review_lengths.png")
    assert tlite("inspect", "sinusoid", "--dim", "16", "--length", "20", "--out", tmp_path).returncode == 0
    assert is_png(tmp_path / "sinusoid_heatmap.png")
    bad = tlite("inspect", "sinusoid", tmp_path)
    assert bad.returncode == 1 and "draws no run" in bad.stderr
    bad = tlite("inspect", "compare")
    assert bad.returncode == 1 and "needs a run directory" in bad.stderr
    run = tmp_path / "run"
    assert (
        tlite(
            "train",
            "generator",
            "--text",
            text,
            "--set",
            "max_length=16",
            "--set",
            "dim=16",
            "--batch-size",
            "4",
            "--max-steps",
            "3",
            "--out",
            run,
        ).returncode
        == 0
    )
    result = tlite("inspect", "next-token", run, "--all-tokens", "--prompt", "Bef")
    assert result.returncode == 0 and is_png(run / "plots" / "next_token_all.png")
    result = tlite("inspect", "positions", run)
    assert is_png(run / "plots" / "position_similarity_comparison.png")
    bad = tlite("inspect", "attention", run, run)
    assert bad.returncode == 1 and "takes one run" in bad.stderr

"""The posts' remaining figures: review lengths and sinusoidal position encodings (post 000), character
frequencies and sinusoidal-versus-learned position similarity (post 004), and curves of several runs
on one plot (post 000's dropout figure: training and validation accuracy with and without dropout).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import atomic_write
from ..data.explore import character_frequencies, review_lengths
from ..layers import sinusoid_table
from . import plots, scores
from .curves import curve_series


def write_review_lengths(texts: list[str], out: Path, char_limit: int = 260, word_limit: int = 50) -> Path:
    """Two histograms (characters, words per review) with the post's limits marked."""
    plt = plots._pyplot()
    lengths = review_lengths(texts)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (name, values), limit in zip(axes, lengths.items(), (char_limit, word_limit)):
        top = np.percentile(values, 99)
        step = max(1, math.ceil(top / 50))  # whole numbers per bin: no empty or doubled bins
        ax.hist(np.minimum(values, top), bins=np.arange(0, top + 2 * step, step), color="tab:blue")
        share = (values < limit).mean()
        ax.axvline(limit, color="tab:red", linestyle="--", label=f"{share:.0%} under {limit}")
        ax.set_xlabel(f"{name} per review (capped at the 99th percentile, {top:.0f})")
        ax.set_ylabel("reviews")
        ax.legend()
    fig.suptitle(f"review lengths ({len(texts):,} reviews)")
    return plots._save(fig, Path(out) / "review_lengths.png")


def write_sinusoid(dim: int, length: int, out: Path) -> list[Path]:
    """Post 000's pair: the sinusoidal encoding as a heatmap (rows: dimensions, columns: positions) and
    the sine waves of the even dimensions (the sines), which lengthen with the dimension."""
    table = sinusoid_table(dim, length)  # (L, C)
    heat = plots.heatmap(
        table.T,
        [str(i) for i in range(dim)],
        [str(j) for j in range(1, length + 1)],  # the post's positions j = 1..L (row 0 is j = 1)
        Path(out) / "sinusoid_heatmap.png",
        f"sinusoidal position encoding (d = {dim})",
        xlabel="position",
        ylabel="dimension",
        cmap="RdBu_r",
        vmin=-1,
        vmax=1,
    )
    plt = plots._pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    fine = np.linspace(0, length, 400)
    positions = np.arange(1, length + 1)  # the table's row j - 1 holds position j, as in the post
    for i in range(0, min(dim, 8), 2):
        wavelength = 2 * math.pi * 10000 ** (i / dim)
        ax.plot(fine, np.sin(2 * math.pi * fine / wavelength), label=f"dim {i}: wavelength {wavelength:.1f}")
        ax.plot(positions, table[:, i].numpy(), "o", markersize=2, color=ax.lines[-1].get_color())
    ax.set_xlabel("position")
    ax.set_ylabel("encoding value")
    ax.set_title("the sine waves of the first even dimensions (dots: the values the table holds)")
    ax.legend(fontsize=7, loc="lower left")
    return [heat, plots._save(fig, Path(out) / "sinusoid_waves.png")]


def write_character_frequencies(text: str, out: Path) -> Path:
    freq = character_frequencies(text)
    total = sum(n for _, n in freq)
    return plots.bars(
        [c for c, _ in freq],
        [n / total for _, n in freq],
        Path(out) / "character_frequencies.png",
        f"character frequencies ({len(freq)} characters)",
        ylabel="share of the text",
    )


def write_position_comparison(model: Any, out: Path) -> Path:
    """Post 004 section 3.4: cosine similarities of the learned position embeddings beside those of the
    sinusoidal encoding of the same size."""
    learned = model.embeddings()["position"]  # (L, C)
    sinusoidal = sinusoid_table(learned.shape[1], learned.shape[0])
    plt = plots._pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    for ax, (name, table) in zip(axes, (("sinusoidal", sinusoidal), ("learned", learned))):
        n = table.shape[0]  # positions 1..n, the first token's 1 as in the posts (the sinusoid table's j)
        similarity = scores.cosine_similarity_matrix(table).numpy()
        im = ax.imshow(similarity, cmap="RdBu_r", vmin=-1, vmax=1, extent=(0.5, n + 0.5, n + 0.5, 0.5))
        ax.set_title(f"{name} ({n} positions x {table.shape[1]})")
        ax.set_xlabel("position (1 = the first token)")
        ax.set_ylabel("position")
    fig.colorbar(im, ax=axes, fraction=0.03)
    fig.suptitle("cosine similarity between positions")
    path = Path(out) / "position_similarity_comparison.png"
    try:  # the one write path (``atomic``)
        atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    finally:
        plt.close(fig)
    return path


def write_run_comparison(run_dirs: list[Path], metric: str, out: Path) -> Path:
    """Training (``train_full_<metric>``) and validation (``val_<metric>``) curves of several runs on one
    plot, e.g. post 000's dropout figure: ``--metric accuracy`` for runs with and without dropout."""
    plt = plots._pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    found = 0
    for k, run in enumerate(run_dirs):
        series = curve_series(Path(run))
        color = f"C{k}"
        for prefix, style in (("train_full_", "--"), ("val_", "-")):
            if f"{prefix}{metric}" in series:
                steps, values = series[f"{prefix}{metric}"]
                ax.plot(steps, values, style, color=color, label=f"{Path(run).name}: {prefix.rstrip('_')}")
                found += 1
    if not found:
        raise ValueError(
            f"no run has a val_{metric} or train_full_{metric} curve; train with --eval-train for the training curve"
        )
    ax.set_xlabel("step")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric}: training (dashed) and validation (solid)")
    ax.legend(fontsize=8)
    return plots._save(fig, Path(out) / f"compare_{metric}.png")

"""PNG plots with matplotlib (Agg backend, no display needed). Each function writes one file."""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..atomic import atomic_write
from ..optional import need


def _pyplot():  # noqa: ANN202 - imported lazily: no import-time side effects
    matplotlib = need("matplotlib", "plots", "drawing plots")
    matplotlib.use("Agg")
    return need("matplotlib.pyplot", "plots", "drawing plots")


def _label(token: str) -> str:
    """A token's text with its spaces and line breaks made visible, and other control characters (a
    byte-level BPE's single bytes 0-31, 127, ...) written as escapes: no font draws them."""
    token = token.replace("\n", "\\n").replace("\t", "\\t").replace(" ", "␣")
    return "".join(_escaped(c) if unicodedata.category(c) in ("Cc", "Cf") else c for c in token)


def _escaped(c: str) -> str:
    return f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"


_MISSING_GLYPH = re.compile(r"Glyph \d+ .*missing from")
_told_missing = [False]  # one notice per process: a BPE run's tokens can lack hundreds of glyphs


@contextmanager
def _missing_glyphs_told_once() -> Iterator[None]:
    """Matplotlib warns once per character its font lacks (every drawing again: 186 lines for one BPE
    run's plots); those characters are drawn as empty boxes. They are told as one class, once; other
    warnings pass through unchanged."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    missing = False
    for w in caught:
        if _MISSING_GLYPH.search(str(w.message)):
            missing = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if missing and not _told_missing[0]:
        _told_missing[0] = True
        warnings.warn(
            "some tokens hold characters the plots' font lacks: they are drawn as empty boxes",
            stacklevel=3,
        )


def heatmap(
    matrix,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    path: str | Path,
    title: str,  # noqa: ANN001
    xlabel: str = "key",
    ylabel: str = "query",
    cmap: str = "viridis",
    vmin=None,
    vmax=None,
    counts=None,
) -> Path:  # noqa: ANN001
    """A heatmap where NaN cells (masked positions) are left blank; ``counts`` (an integer array of the same
    shape, such as a confusion matrix's) are written in their cells when there are at most 30 rows and
    columns (beyond that the digits would not fit)."""
    plt = _pyplot()
    data = np.ma.masked_invalid(np.asarray(matrix, dtype=float))
    n_rows, n_cols = data.shape
    size = max(4.0, min(18.0, 0.28 * max(n_rows, n_cols) + 2))
    fig, ax = plt.subplots(figsize=(size, size * n_rows / max(n_cols, 1) + 0.8))
    colormap = plt.get_cmap(cmap).with_extremes(bad="white")
    im = ax.imshow(data, cmap=colormap, vmin=vmin, vmax=vmax, aspect="auto")
    if n_cols <= 80:
        ax.set_xticks(range(n_cols), [_label(t) for t in col_labels], rotation=90, fontsize=8)
    if n_rows <= 80:
        ax.set_yticks(range(n_rows), [_label(t) for t in row_labels], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if counts is not None and max(n_rows, n_cols) <= 30:
        _write_counts(ax, np.asarray(counts), data, im)
    return _save(fig, path)


def _write_counts(ax, counts: np.ndarray, data: np.ma.MaskedArray, im) -> None:  # noqa: ANN001
    """Each count in its cell, white on the dark half of the colour scale and black on the light half."""
    low, high = im.norm.vmin, im.norm.vmax
    middle = (low + high) / 2 if low is not None and high is not None else 0.5
    size = max(5, min(10, 120 // max(counts.shape)))
    for (i, j), count in np.ndenumerate(counts):
        dark = data[i, j] is not np.ma.masked and float(data[i, j]) > middle
        ax.text(j, i, f"{int(count):,}", ha="center", va="center", fontsize=size, color="white" if dark else "black")


def bars(labels: Sequence[str], values, path: str | Path, title: str, ylabel: str = "probability") -> Path:  # noqa: ANN001
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.35 * len(labels) + 2), 4))
    ax.bar(range(len(labels)), values, color="tab:blue")
    ax.set_xticks(range(len(labels)), [_label(t) for t in labels], fontsize=9)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return _save(fig, path)


def scatter_labels(points, labels: Sequence[str], path: str | Path, title: str) -> Path:  # noqa: ANN001
    """2-D points drawn as their labels (characters), as in post 004's embedding plots."""
    plt = _pyplot()
    pts = np.asarray(points, dtype=float)
    fig, ax = plt.subplots(figsize=(7, 7))
    ax.scatter(pts[:, 0], pts[:, 1], s=4, alpha=0.2)
    for (x, y), label in zip(pts, labels):
        ax.annotate(_label(label), (x, y), fontsize=10, ha="center", va="center")
    ax.set_title(title)
    return _save(fig, path)


def curves(
    series: dict[str, tuple[list[float], list[float]]],
    path: str | Path,
    title: str,
    xlabel: str = "step",
    second: dict[str, tuple[list[float], list[float]]] | None = None,
) -> Path:
    """Lines against ``xlabel``; ``second`` (other units: accuracy, BLEU, ...) gets a panel of its own."""
    plt = _pyplot()
    panels = [series] + ([second] if second else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4), squeeze=False)
    for ax, group in zip(axes[0], panels):
        for name, (x, y) in group.items():
            ax.plot(x, y, marker="o" if len(x) < 60 else None, markersize=3, label=name)
        ax.set_xlabel(xlabel)
        ax.legend()
        ax.grid(alpha=0.3)
    axes[0][0].set_title(title)
    return _save(fig, path)


def grouped_bars(
    groups: Sequence[str],
    series: Sequence[str],
    values,
    path: str | Path,
    title: str,  # noqa: ANN001
    xlabel: str,
    ylabel: str,
) -> Path:
    """``values[g][s]``: one cluster of bars per group (e.g. per true star), one bar per series."""
    plt = _pyplot()
    vals = np.asarray(values, dtype=float)
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(series)
    for j, name in enumerate(series):
        ax.bar(np.arange(len(groups)) + (j - (len(series) - 1) / 2) * width, vals[:, j], width, label=name)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, path)


def histogram(values, path: str | Path, title: str, xlabel: str, bins: int = 20) -> Path:  # noqa: ANN001
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(np.asarray(values, dtype=float), bins=bins, range=(0, 1), color="tab:purple")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("reviews")
    ax.set_title(title)
    return _save(fig, path)


def _save(fig, path: str | Path) -> Path:  # noqa: ANN001
    path = Path(path)
    try:  # the one write path: a temporary file renamed onto ``path`` (``atomic``)
        with _missing_glyphs_told_once():  # laying out and drawing the text is where glyphs are missed
            fig.tight_layout()
            atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format=path.suffix.lstrip(".") or "png"))
    finally:
        _pyplot().close(fig)
    return path

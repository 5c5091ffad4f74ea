"""The PNG plots: token labels any font can draw, and characters the font lacks told once, not per glyph."""

import warnings

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from transformers_lite.inspect import plots  # noqa: E402


def test_control_characters_are_written_as_escapes_and_spaces_made_visible():
    assert plots._label("a\x00b\x1f \n\t\u200b") == "a\\x00b\\x1f␣\\n\\t\\u200b"
    assert plots._label("Ġthe") == "Ġthe"


def test_missing_glyphs_are_told_once_for_every_plot_and_other_warnings_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "_told_missing", [False])
    tokens = ["漢", "字", "\x01", "a"]  # DejaVu Sans has no CJK; a byte token is escaped
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(2):
            plots.heatmap(np.eye(4), tokens, tokens, tmp_path / f"h{i}.png", "attention")
            plots.bars(tokens, [0.1, 0.2, 0.3, 0.4], tmp_path / f"b{i}.png", "next token")
        with plots._missing_glyphs_told_once():
            warnings.warn("something else", UserWarning, stacklevel=1)
    said = [str(w.message) for w in caught]
    assert not any("Glyph" in m for m in said)
    assert sum("font lacks" in m for m in said) == 1 and "something else" in said
    assert all((tmp_path / f"{kind}{i}.png").stat().st_size > 0 for kind in "hb" for i in range(2))

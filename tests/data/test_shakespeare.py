import subprocess
import sys
import json

import pytest
import torch

from transformers_lite.data.shakespeare import (get_shifted_batch, prepare_gutenberg, split_text, steps_per_epoch,
                                                text_stats)

from ..conftest import shared_data

RAW = """The Project Gutenberg eBook of The Complete Works of William Shakespeare

This eBook is for the use of anyone anywhere.

*** START OF THE PROJECT GUTENBERG EBOOK THE COMPLETE WORKS OF WILLIAM SHAKESPEARE ***

Contents

THE SONNETS
A MIDSUMMER NIGHT’S DREAM

THE SONNETS

1

From fairest creatures we desire increase,
That thereby beauty’s rose might never die,

A MIDSUMMER NIGHT’S DREAM

Dramatis Personæ

THESEUS, Duke of Athens.
LYSANDER, in love with Hermia.

ACT I

SCENE I. Athens. A room in the Palace of Theseus.

LYSANDER.
How now, my love? Why is your cheek so pale?
How chance the roses there do fade so fast?

HERMIA.
Belike for want of rain, which I could well
Beteem them from the tempest of my eyes, &c. Œdipus & co.

*** END OF THE PROJECT GUTENBERG EBOOK THE COMPLETE WORKS OF WILLIAM SHAKESPEARE ***

Updated editions will replace the previous one. START: FULL LICENSE
"""


def test_prepare_keeps_only_speeches():
    text = prepare_gutenberg(RAW)
    assert text.startswith("LYSANDER.\nHow now, my love?")
    assert "HERMIA.\nBelike" in text
    for gone in ("Gutenberg", "Contents", "SONNETS", "fairest", "Dramatis", "ACT I", "SCENE", "LICENSE", "&"):
        assert gone not in text
    assert "etc." in text and "dipus" in text and "Œ" not in text
    assert "Œ" in prepare_gutenberg(RAW, ascii_only=False)


def test_stats_match_hand_counts():
    stats = text_stats("AB cd.\nef\n\nGH\n")
    assert stats == {"characters": 14, "unique_characters": 11, "lines": 4, "passages": 2, "words": 4,
                     "longest_line": 6, "longest_passage": 9, "mean_line_length": 2.5}


def test_contiguous_split_and_shifted_batches():
    data = torch.arange(1000)
    train, val = split_text(data, 0.1)
    assert len(train) == 900 and torch.equal(val, torch.arange(900, 1000))
    rng = torch.Generator().manual_seed(0)
    x, y = get_shifted_batch(rng, train, 16, 8)
    assert x.shape == y.shape == (8, 16)
    assert torch.equal(y[:, :-1], x[:, 1:]) and torch.equal(y[:, -1], x[:, -1] + 1)
    x2, _ = get_shifted_batch(torch.Generator().manual_seed(0), train, 16, 8)
    assert torch.equal(x, x2)
    with pytest.raises(ValueError, match="too short for context 16"):
        get_shifted_batch(rng, torch.arange(10), 16, 2)
    assert steps_per_epoch(4_900_000, 64, 32) == 2272  # the seed's ~2,300 steps per epoch


def test_tiny_shakespeare_statistics_through_the_cli():
    path = shared_data("tinyshakespeare", "input.txt")
    out = subprocess.run([sys.executable, "-m", "transformers_lite", "data", "stats", str(path), "--json"],
                         capture_output=True, text=True, check=True).stdout
    stats = json.loads(out)
    assert stats["characters"] == 1_115_394 and stats["unique_characters"] == 65 and stats["lines"] == 40_000

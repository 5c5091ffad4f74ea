import json
import subprocess
import sys

import pytest
import torch

from transformers_lite.data.shakespeare import get_shifted_batch, split_text, steps_per_epoch, text_stats

from ..conftest import shared_data


def test_stats_match_hand_counts():
    stats = text_stats("AB cd.\nef\n\nGH\n")
    assert stats == {
        "characters": 14,
        "unique_characters": 11,
        "lines": 4,
        "passages": 2,
        "words": 4,
        "longest_line": 6,
        "longest_passage": 9,
        "mean_line_length": 2.5,
    }


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
    # the seed: L = 4.9e6, a 95/5 split, n = 64, B = 32: 0.95 L / (n B) = 2,272 ("2,300 steps per epoch")
    assert steps_per_epoch(int(0.95 * 4_900_000), 64, 32) == 2272


def test_tiny_shakespeare_statistics_through_the_cli():
    path = shared_data("tinyshakespeare", "input.txt")
    out = subprocess.run(
        [sys.executable, "-m", "transformers_lite", "data", "stats", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stats = json.loads(out)
    assert stats["characters"] == 1_115_394 and stats["unique_characters"] == 65 and stats["lines"] == 40_000

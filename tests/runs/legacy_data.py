"""The data the runs of ``tests/fixtures/runs_0.2`` were trained on, written again byte for byte by the
tests that resume them (a run may continue on a moved copy of its data with the same sha256)."""

from __future__ import annotations

import json
import random
from pathlib import Path

KEYWORDS = {1: "awful", 2: "poor", 3: "okay", 4: "good", 5: "superb"}
FILLER = "the product arrived in a box and i used it for a week with my family at home".split()
WORDS = "alpha beta gamma delta epsilon zeta eta theta".split()
REVIEWS = ["It was superb, the box too.", "Awful.", "okay i used it"]
TEXTS = ["alpha beta gamma", "delta eta"]


def reviews(folder: Path) -> tuple[Path, Path]:
    """A small 5-star corpus whose stars follow one keyword among filler words: train and dev files."""
    out = []
    for name, n, seed in (("train.jsonl", 300, 0), ("dev.jsonl", 60, 1)):
        rng = random.Random(seed)
        lines = []
        for _ in range(n):
            stars = rng.randint(1, 5)
            words = rng.sample(FILLER, 8)
            words.insert(rng.randint(0, 8), KEYWORDS[stars])
            lines.append(json.dumps({"review_body": " ".join(words).capitalize() + ".", "stars": str(stars)}))
        (folder / name).write_text("\n".join(lines) + "\n")
        out.append(folder / name)
    return out[0], out[1]


def pairs(folder: Path) -> tuple[Path, Path]:
    """Sentences and their reversal: source and target files."""
    rng = random.Random(0)
    src = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))) for _ in range(200)]
    (folder / "train.src").write_text("\n".join(src) + "\n")
    (folder / "train.tgt").write_text("\n".join(" ".join(reversed(s.split())) for s in src) + "\n")
    return folder / "train.src", folder / "train.tgt"

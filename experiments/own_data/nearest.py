"""Where the translation memory wins: the gettext test pairs grouped by how close their source is to the
nearest training source (the memory's own measure: the cosine of character 2-4-gram TF-IDF vectors), with
the memory's BLEU in each group, copying's, and that of any translations given (one line per test pair,
in order, as `tlite translate RUN --input DATA/gettext/test.de --output FILE` writes them):

    .venv/bin/python experiments/own_data/nearest.py DATA_DIR [TRANSLATIONS ...]

One JSON line per group: its cosine range, how many pairs, and each one's corpus BLEU and chrF on them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from transformers_lite.evaluation.metrics import corpus_scores
from transformers_lite.evaluation.pair_baselines import nearest_sources

# (lowest, highest) cosine of each group; 0.999: the same source up to case, spacing, word order and rounding
GROUPS = ((0.999, 1.01), (0.8, 0.999), (0.5, 0.8), (0.0, 0.5))


def read_pairs(path: Path) -> tuple[list[str], list[str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["src"] for r in rows], [r["tgt"] for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="what build.py wrote")
    parser.add_argument("translations", type=Path, nargs="*", help="a model's translations of the test sources")
    args = parser.parse_args()
    train = read_pairs(args.data / "gettext" / "train.jsonl")
    sources, references = read_pairs(args.data / "gettext" / "test.jsonl")
    index, cosine = nearest_sources(train[0], sources)
    systems = {"memory": [train[1][j] for j in index], "copy": sources}
    for path in args.translations:
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) != len(sources):
            raise SystemExit(f"{path}: {len(lines)} lines, but the test part has {len(sources)} pairs")
        systems[str(path)] = lines
    for low, high in GROUPS:
        members = [i for i, c in enumerate(cosine) if low <= c < high]
        if not members:
            continue
        row = {"cosine": [low, min(high, 1.0)], "pairs": len(members), "share": round(len(members) / len(sources), 3)}
        for name, hypotheses in systems.items():
            scores = corpus_scores([hypotheses[i] for i in members], [references[i] for i in members])
            row[name] = {k: round(v, 2) for k, v in scores.items()}
        print(json.dumps(row))


if __name__ == "__main__":
    main()

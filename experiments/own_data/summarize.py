"""The own-data table of docs/results/own-data.md from the JSON lines ``table.sh`` printed.

    python experiments/own_data/summarize.py OUT.jsonl

One row per set, preset and budget: the test score (mean of the seeds, and their range), the strong
baseline of the set beside it with its seconds, the wall time of the training command (mean and the
largest, against the budget plus 5 %), and what ``--preset auto`` chose on each seed.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter, defaultdict

METRICS = {
    "fortunes": "macro_f1",
    "sections": "macro_f1",
    "priority": "macro_f1",
    "gettext": "bleu",
    "email": "bits_per_char",
}
BASELINE_OF = {
    "fortunes": "tfidf-svm",
    "sections": "tfidf-svm",
    "priority": "tfidf-svm",
    "gettext": "memory",
    "email": "xz",
}


def main(path: str) -> None:
    runs: dict[tuple[str, str, float], list[dict]] = defaultdict(list)
    baselines: dict[str, dict[str, dict]] = defaultdict(dict)
    for line in open(path, encoding="utf-8"):
        row = json.loads(line)
        if "minutes" in row:
            runs[row["set"], row["preset"], row["minutes"]].append(row)
        elif isinstance(row.get("baseline"), dict):
            baselines[row["set"]][row["baseline"]["baseline"]] = row["baseline"]
        elif row.get("baseline"):
            baselines[row["set"]][row["baseline"]] = {**row["test"], "wall_s": row["wall_s"]}
    print(
        "| set | preset | minutes | test score, mean (range) of seeds | strong baseline (seconds) | "
        "wall time: mean / largest (budget + 5 %) | what auto chose |"
    )
    print("|---|---|---|---|---|---|---|")
    for (name, preset, minutes), rows in sorted(runs.items()):
        metric = METRICS[name]
        scores = [r["test"][metric] for r in rows]
        walls = [r["wall_s"] for r in rows]
        base = baselines[name].get(BASELINE_OF[name], {})
        base_text = (
            f"{BASELINE_OF[name]} {base[metric]:.3f} ({base.get('seconds', 0):.1f} s)" if metric in base else "-"
        )
        chose = Counter(r["run"]["chose"] for r in rows)
        score = f"{metric} {statistics.mean(scores):.3f} ({min(scores):.3f}-{max(scores):.3f}), {len(scores)} seeds"
        wall = f"{statistics.mean(walls):.1f} / {max(walls):.1f} s ({minutes * 60 * 1.05:.0f} s)"
        chosen = "; ".join(f"{c} x{n}" for c, n in chose.most_common())
        print(f"| {name} | {preset} | {minutes:g} | {score} | {base_text} | {wall} | {chosen} |")
    for name, named in sorted(baselines.items()):
        for kind, row in named.items():
            print(f"{name} baseline {kind}: {json.dumps(row)}")


if __name__ == "__main__":
    main(sys.argv[1])

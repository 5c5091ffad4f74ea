"""Decoding time and quality of a trained translator on Multi30k validation (batched beam search).

    .venv/bin/python benchmarks/bench_translate.py RUN [--src val.de.gz --ref val.en.gz] [--repeats 2]
    .venv/bin/python benchmarks/bench_translate.py RUN --profile      # where beam 4's time goes

For greedy and beam 4: the time to translate all sentences in batches of 64 (the library's path: every
sentence and every beam of a batch in one tensor pass), the median of ``--repeats``, and BLEU/chrF;
then the same with one sentence per call (batch 1), the per-sentence loop that batching replaces.
One JSON line per measurement, with the machine. ``--profile`` instead runs beam 4 once under
``torch.profiler`` and prints each operator's share of the CPU time (the largest ten).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
from common import DATA as SHARED
from common import MACHINE

import transformers_lite as tl
from transformers_lite.data.translation import load_parallel
from transformers_lite.evaluation.translation import corpus_scores
from transformers_lite.generation.translate import DecodeSettings, translate_texts

DATA = SHARED / "multi30k"


def profile(run, sources: list[str]) -> None:  # noqa: ANN001
    with torch.inference_mode():
        translate_texts(run.model, run.src_tokenizer, run.tokenizer, sources[:64], DecodeSettings(beam=4))  # warm-up
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            translate_texts(run.model, run.src_tokenizer, run.tokenizer, sources, DecodeSettings(beam=4))
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events)
    shares = {e.key: round(100 * e.self_cpu_time_total / total, 1) for e in events[:10]}
    print(json.dumps({"benchmark": "translate-profile", "beam": 4, "share_pct": shares, "machine": MACHINE}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("--src", default=str(DATA / "val.de.gz"))
    parser.add_argument("--ref", default=str(DATA / "val.en.gz"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-unbatched", action="store_true")
    parser.add_argument("--profile", action="store_true", help="beam 4 once under torch.profiler")
    args = parser.parse_args()
    run = tl.load(args.run)
    sources, references = load_parallel(args.src, args.ref)
    if args.profile:
        profile(run, sources)
        return
    for beam in (1, 4):
        settings = DecodeSettings(beam=beam)
        for batch_size in (64,) if args.skip_unbatched else (64, 1):
            times = []
            for _ in range(args.repeats if batch_size > 1 else 1):
                start = time.perf_counter()
                with torch.inference_mode():
                    hypotheses = translate_texts(
                        run.model, run.src_tokenizer, run.tokenizer, sources, settings, batch_size
                    )
                times.append(time.perf_counter() - start)
            scores = corpus_scores(hypotheses, references)
            print(
                json.dumps(
                    {
                        "benchmark": "translate",
                        "beam": beam,
                        "batch_size": batch_size,
                        "sentences": len(sources),
                        "seconds": round(statistics.median(times), 2),
                        "bleu": round(scores["bleu"], 2),
                        "chrf": round(scores["chrf"], 2),
                        "machine": MACHINE,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Recipe trials for the GPT presets: the search behind the post-gpt and baby-gpt presets.

Each trial is the preset's current recipe with a few settings changed, trained through
``Recipe.run`` (the code path of ``tlite train``) on tiny Shakespeare within a time budget, and
scored on the whole validation split (the last 10 %). One JSON line per trial and random seed.

    .venv/bin/python experiments/gpt_recipes.py post-gpt --minutes 1            # every trial, 1 minute each
    .venv/bin/python experiments/gpt_recipes.py baby-gpt --minutes 1 --only lr3e-3-b24
    .venv/bin/python experiments/gpt_recipes.py post-gpt --minutes 4 --steps-per-second 33   # a slower machine

``--steps-per-second N`` caps the step rate (sleeping after each step) to emulate a machine where
the budget buys fewer steps: 33 steps/s is about 8,000 steps in 4 minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from common import DATA, MACHINE, Throttle  # noqa: E402

from transformers_lite import get_preset  # noqa: E402

TEXT = DATA / "tinyshakespeare" / "input.txt"

# the first release's defaults for every generator: AdamW 1e-3, betas 0.9/0.99, weight decay 0.01,
# 100 warmup steps, cosine to 10 %, clip 1, batch 32, the preset's dropout
FIRST_RELEASE = dict(lr=1e-3, weight_decay=0.01, beta2=0.99, warmup_steps=100, min_lr_ratio=0.1, grad_clip=1.0)
TRIALS: dict[str, dict[str, tuple[dict, list[str]]]] = {  # name -> (settings, model overrides)
    "post-gpt": {
        "first-release": ({**FIRST_RELEASE, "batch_size": 32}, ["dropout=0.1"]),
        "lr1e-2": ({"lr": 1e-2, "batch_size": 32}, ["dropout=0.1"]),
        "lr1e-2-nodrop": ({"lr": 1e-2, "batch_size": 32}, ["dropout=0.0"]),
        "lr2e-2-nodrop": ({"lr": 2e-2, "batch_size": 32}, ["dropout=0.0"]),
        "lr1e-2-nodrop-b64": ({"lr": 1e-2, "batch_size": 64}, ["dropout=0.0"]),
        "lr2e-2-nodrop-b64": ({"lr": 2e-2, "batch_size": 64}, ["dropout=0.0"]),
        "lr1e-2-nodrop-floor0": ({"lr": 1e-2, "batch_size": 32, "min_lr_ratio": 0.0}, ["dropout=0.0"]),
        "lr1e-2-nodrop-wd0.1": ({"lr": 1e-2, "batch_size": 32, "weight_decay": 0.1}, ["dropout=0.0"]),
        "lr1e-2-nodrop-beta95": ({"lr": 1e-2, "batch_size": 32, "beta2": 0.95}, ["dropout=0.0"]),
    },
    "baby-gpt": {
        "first-release": ({**FIRST_RELEASE, "batch_size": 12}, []),
        "lr2e-3": ({"lr": 2e-3, "batch_size": 12}, []),
        "lr3e-3": ({"lr": 3e-3, "batch_size": 12}, []),
        "lr2e-3-b24": ({"lr": 2e-3, "batch_size": 24}, []),
        "lr3e-3-b24": ({"lr": 3e-3, "batch_size": 24}, []),
        "lr3e-3-beta95": ({"lr": 3e-3, "batch_size": 12, "beta2": 0.95}, []),
        "lr3e-3-wd0.1": ({"lr": 3e-3, "batch_size": 12, "weight_decay": 0.1}, []),
        "lr2e-3-gpt2init": ({"lr": 2e-3, "batch_size": 12}, ["init=gpt2"]),
        "lr3e-3-gpt2init": ({"lr": 3e-3, "batch_size": 12}, ["init=gpt2"]),
        "lr2e-3-b8": ({"lr": 2e-3, "batch_size": 8}, []),
        "lr2e-3-beta95-wd0.1-floor0": (
            {"lr": 2e-3, "batch_size": 12, "beta2": 0.95, "weight_decay": 0.1, "min_lr_ratio": 0.0},
            [],
        ),
    },
}


def trial(
    preset: str, name: str, seed: int, minutes: float, rate: float | None, eval_every: int, steps: int | None = None
) -> dict:
    settings, model = TRIALS[preset][name]
    limit = {"max_steps": steps} if steps else {"max_minutes": minutes}
    experiment = get_preset(preset).override(
        model, text=str(TEXT), seed=seed, **limit, **{"eval_every": eval_every, **settings}
    )
    callbacks = [Throttle(rate)] if rate else []
    with tempfile.TemporaryDirectory() as tmp:
        result = experiment.run(Path(tmp) / "run", callbacks=callbacks, log=lambda *_: None)
    last = result.state.history[-1]
    return {
        "preset": preset,
        "trial": name,
        "seed": seed,
        "minutes": None if steps else minutes,
        "steps_per_second_cap": rate,
        "steps": result.state.step,
        "wall_s": last["wall_s"],
        "val_loss": round(last["val_loss"], 4),
        "val_perplexity": round(last["val_perplexity"], 3),
        "settings": settings,
        "model": model,
        "machine": MACHINE,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("preset", choices=sorted(TRIALS))
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--only", action="append", help="run only these trials")
    parser.add_argument("--seeds", default="0", help="comma-separated random seeds")
    parser.add_argument("--steps-per-second", type=float, default=None, help="cap the step rate")
    parser.add_argument("--eval-every", type=int, default=2000, help="steps between evaluations (one at the end)")
    parser.add_argument("--steps", type=int, default=None, help="a step limit instead of --minutes (no speed noise)")
    args = parser.parse_args()
    for name in args.only or TRIALS[args.preset]:
        for seed in (int(s) for s in args.seeds.split(",")):
            result = trial(args.preset, name, seed, args.minutes, args.steps_per_second, args.eval_every, args.steps)
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

"""The speedrun's techniques, one at a time, on the character GPT that ``--preset auto`` trains.

Each trial is a preset's model (``baby-gpt`` by default: what ``--preset auto`` chooses for 2 to 15
minutes on the 2-core machine) with its AdamW recipe (``BASE``: AdamW and a cosine schedule, as the
presets trained before Muon won this ablation) and one technique added, trained through ``Recipe.run`` (the code path
of ``tlite train``) on tiny Shakespeare and scored on the whole validation split (the last 10 %). One
JSON line per trial and random seed, with the steps taken, the wall-clock seconds and the seconds per
step, so a trial that wins per step can be weighed against what it costs per step.

    .venv/bin/python experiments/speedrun_ablation.py --steps 2000                     # per step: no timing noise
    .venv/bin/python experiments/speedrun_ablation.py --minutes 5 --seeds 0,1,2        # the user's budget
    .venv/bin/python experiments/speedrun_ablation.py --steps 2000 --only base muon
    python3 experiments/speedrun_ablation.py --steps 2000 --device cuda --bf16 --compile   # on a GPU

``--steps N`` compares the techniques at a fixed number of steps (free of timing noise: it can run beside
other work; two runs of one trial still differ by up to ~0.005 in validation loss); ``--minutes M``
compares what each buys in a time budget and needs a quiet machine, one trial at a time. The table in
docs/results/generator.md names the command behind each row.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from common import DATA, MACHINE  # noqa: E402

from transformers_lite import get_preset  # noqa: E402

TEXT = DATA / "tinyshakespeare" / "input.txt"

# the reference every trial starts from: each GPT preset's recipe before Muon won this ablation (AdamW, cosine)
BASE = {
    "post-gpt": {"optimizer": "adamw", "schedule": "cosine", "min_lr_ratio": 0.0},
    "baby-gpt": {"optimizer": "adamw", "schedule": "cosine", "min_lr_ratio": 0.1},
    "small-gpt": {"optimizer": "adamw", "schedule": "cosine", "min_lr_ratio": 0.1},
}
# baby-gpt's recipe today: Muon at 0.01 with the warmup-stable-decay schedule to 0
MUON_WSD = {"optimizer": "muon", "muon_lr": 0.01, "schedule": "wsd", "min_lr_ratio": 0.0}
# name -> (trainer settings, model overrides), each added alone to BASE and the preset's model
TRIALS: dict[str, tuple[dict, list[str]]] = {
    "base": ({}, []),
    "muon": ({"optimizer": "muon", "muon_lr": 0.02}, []),
    "muon-lr0.01": ({"optimizer": "muon", "muon_lr": 0.01}, []),
    "muon-lr0.05": ({"optimizer": "muon", "muon_lr": 0.05}, []),
    "muon-lr0.005": ({"optimizer": "muon", "muon_lr": 0.005}, []),
    "muon-lr0.01-wsd": (MUON_WSD, []),
    "muon-lr0.03-wsd": ({**MUON_WSD, "muon_lr": 0.03}, []),
    "muon-lr0.1-wsd": ({**MUON_WSD, "muon_lr": 0.1}, []),
    "wsd": ({"schedule": "wsd", "min_lr_ratio": 0.0}, []),
    "ema0.99": ({"ema": 0.99}, []),
    "ema0.999": ({"ema": 0.999}, []),
    "rms": ({}, ["norm=rms"]),
    "qk-norm": ({}, ["qk_norm=true"]),
    "relu2": ({}, ["activation=relu2"]),
    "zero-init": ({}, ["zero_init=true"]),
    "soft-cap": ({}, ["logit_cap=30"]),
    "value-residual": ({}, ["value_residual=true"]),
    "bigram": ({}, ["bigram_embedding=true"]),
    "embedding-shortcut": ({}, ["embedding_shortcut=true"]),
    "untied-head": ({}, ["tie_embeddings=false"]),
    "muon-lr0.01-wsd-untied": (MUON_WSD, ["tie_embeddings=false"]),
    # the winners together: Muon at 0.01 with wsd, and the model options that won alone
    "combined": (
        MUON_WSD,
        ["zero_init=true", "bigram_embedding=true", "value_residual=true"],
    ),
}


def trial(
    preset: str, name: str, seed: int, minutes: float | None, steps: int | None, eval_every: int, device: dict
) -> dict:
    """One trial: ``device`` holds the trainer's device settings (``device``, ``bf16``, ``compile``)."""
    settings, model = TRIALS[name]
    limit = {"max_steps": steps} if steps else {"max_minutes": minutes}
    options = {**BASE.get(preset, {}), **settings, **limit, **device}
    recipe = get_preset(preset).override(model, text=str(TEXT), seed=seed, eval_every=eval_every, **options)
    with tempfile.TemporaryDirectory() as tmp:
        result = recipe.run(Path(tmp) / "run", log=lambda *_: None)
    last = result.state.history[-1]
    return {
        "preset": preset,
        "trial": name,
        "seed": seed,
        "minutes": minutes if not steps else None,
        "steps": result.state.step,
        "wall_s": last["wall_s"],
        "s_per_step": round(last["wall_s"] / max(result.state.step, 1), 5),
        "val_loss": round(last["val_loss"], 4),
        "settings": settings,
        "model": model,
        **device,
        "machine": _machine(device["device"]),
    }


def _machine(device: str) -> str:
    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(torch.device(device))}, torch {torch.__version__}"
    return MACHINE


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="baby-gpt")
    parser.add_argument("--only", nargs="+", choices=sorted(TRIALS), help="run only these trials")
    parser.add_argument("--seeds", default="0", help="comma-separated random seeds")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--minutes", type=float, help="a time budget per trial (a quiet machine)")
    group.add_argument("--steps", type=int, help="a step limit per trial (no timing noise)")
    parser.add_argument("--eval-every", type=int, default=100_000, help="steps between evaluations (one at the end)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N or mps")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast (a GPU's precision)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    args = parser.parse_args()
    device = {"device": args.device, "bf16": args.bf16, "compile": args.compile}
    for seed in (int(s) for s in args.seeds.split(",")):  # every trial once per seed: a slow drift hits all alike
        for name in args.only or TRIALS:
            row = trial(args.preset, name, seed, args.minutes, args.steps, args.eval_every, device)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

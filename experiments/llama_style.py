"""The ``llama-style`` generator beside ``baby-gpt`` at equal minutes, each with its own preset's recipe
(Muon 0.01 on the blocks' matrices, wsd to 0, lr 2e-3, batch 12), on tiny Shakespeare, scored on the
whole validation split (the last 10 %). One JSON line per arm and random seed, with the steps each bought.

    .venv/bin/python experiments/llama_style.py --minutes 5 --seeds 0,1,2     # a quiet machine, one at a time
    .venv/bin/python experiments/llama_style.py --steps 2000 --only baby-gpt llama-style   # per step, any time

Arms: the two presets; ``llama-style-tied`` (its head the token embedding table, as baby-gpt's; the
preset keeps its own output matrix, lower on every seed measured); and baby-gpt with one of
llama-style's changes at a time (``+swiglu``, ``+gqa``, ``+rms-rope``), so a difference can be put down
to its part. The rows of docs/results/generator.md name
this command.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from common import DATA, MACHINE  # noqa: E402

from transformers_lite import count_parameters, get_preset, load  # noqa: E402

TEXT = DATA / "tinyshakespeare" / "input.txt"
# name -> (preset, model overrides)
ARMS: dict[str, tuple[str, list[str]]] = {
    "baby-gpt": ("baby-gpt", []),
    "llama-style": ("llama-style", []),
    "llama-style-tied": ("llama-style", ["tie_embeddings=true"]),
    "baby-gpt+swiglu": ("baby-gpt", ["ffn=swiglu", "dim_hidden=384"]),
    "baby-gpt+gqa": ("baby-gpt", ["kv_heads=2"]),
    "baby-gpt+rms-rope": ("baby-gpt", ["norm=rms", "position=rope"]),
}


def arm(name: str, seed: int, minutes: float | None, steps: int | None, eval_every: int) -> dict:
    preset, model = ARMS[name]
    limit = {"max_steps": steps, "max_minutes": None} if steps else {"max_minutes": minutes}
    recipe = get_preset(preset).override(model, text=str(TEXT), seed=seed, eval_every=eval_every, **limit)
    with tempfile.TemporaryDirectory() as tmp:
        result = recipe.run(Path(tmp) / "run", log=lambda *_: None)
        parameters = count_parameters(load(result.run_dir).model)[0]
    last = result.state.history[-1]
    return {
        "arm": name,
        "preset": preset,
        "model": model,
        "seed": seed,
        "minutes": minutes if not steps else None,
        "steps": result.state.step,
        "wall_s": last["wall_s"],
        "val_loss": round(last["val_loss"], 4),
        "parameters": parameters,
        "machine": MACHINE,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="+", choices=sorted(ARMS), help="run only these arms")
    parser.add_argument("--seeds", default="0", help="comma-separated random seeds")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--minutes", type=float, help="a time budget per arm (a quiet machine)")
    group.add_argument("--steps", type=int, help="a step limit per arm (no timing noise)")
    parser.add_argument("--eval-every", type=int, default=100_000, help="steps between evaluations (one at the end)")
    args = parser.parse_args()
    for seed in (int(s) for s in args.seeds.split(",")):  # every arm once per seed: a slow drift hits all alike
        for name in args.only or ARMS:
            print(json.dumps(arm(name, seed, args.minutes, args.steps, args.eval_every)), flush=True)


if __name__ == "__main__":
    main()

"""One-minute training trials at the seed-gpt size (the learning-rate/dropout search behind the
quality settings in bench_gpt.py). Prints one JSON line per trial; about 8 minutes in all.

    .venv/bin/python benchmarks/gpt_trials.py
"""

from __future__ import annotations

import json
import tempfile

import torch
from bench_gpt import MACHINE, TEXT

from transformers_lite import build_model, get_preset
from transformers_lite.tasks.generator import GeneratorSettings, GeneratorTask
from transformers_lite.training.trainer import TrainConfig, Trainer

# (lr, batch, weight decay, cosine floor, dropout)
TRIALS = [
    (3e-3, 32, 0.1, 0.1, 0.1),
    (6e-3, 32, 0.1, 0.1, 0.1),
    (3e-3, 64, 0.1, 0.1, 0.1),
    (1e-2, 32, 0.1, 0.1, 0.1),
    (1e-2, 32, 0.1, 0.0, 0.1),
    (1e-2, 32, 0.0, 0.1, 0.1),
    (1e-2, 32, 0.1, 0.1, 0.0),
    (2e-2, 32, 0.1, 0.1, 0.1),
]


def main() -> None:
    for lr, batch, wd, floor, dropout in TRIALS:
        config = get_preset("seed-gpt").replace(dropout=dropout)
        task = GeneratorTask(GeneratorSettings(str(TEXT), batch_size=batch), config, seed=0)
        config = task.adapt_config(config)
        torch.manual_seed(0)
        steps = 4000 if batch == 32 else 2200
        with tempfile.TemporaryDirectory() as tmp:
            cfg = TrainConfig(
                max_steps=steps,
                max_minutes=1.0,
                lr=lr,
                warmup_steps=100,
                eval_every=10**6,
                weight_decay=wd,
                min_lr_ratio=floor,
            )
            state = Trainer(build_model(config), task, cfg, tmp, config, log=lambda *_: None).fit()
        last = state["history"][-1]
        print(
            json.dumps(
                {
                    "lr": lr,
                    "batch": batch,
                    "weight_decay": wd,
                    "min_lr_ratio": floor,
                    "dropout": dropout,
                    "steps": state["step"],
                    "wall_s": last["wall_s"],
                    "val_perplexity": round(last["val_perplexity"], 3),
                    "machine": MACHINE,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Which model size is best for a time budget: the character GPT at several sizes × budgets on tiny
Shakespeare, each trained through the user's own command and scored on the whole validation split.

    .venv/bin/python experiments/gpt_budget_sweep.py                          # every size x budget, seed 0
    .venv/bin/python experiments/gpt_budget_sweep.py --presets baby-gpt small-gpt --minutes 5 15 --seeds 0 1 2
    .venv/bin/python experiments/gpt_budget_sweep.py --presets auto --minutes 2 5 --nanogpt /tmp/nanoGPT

Each cell runs ``tlite train generator --text input.txt --preset P --max-minutes M --seed S``
(so a cell measures exactly what a user gets), then ``tlite evaluate RUN --json`` for the validation
loss (the last 10 % of the text). One JSON line per cell: preset, parameters, minutes, steps, loss. As in
compute-optimal training, the question per budget is which size reaches the lowest loss: a larger model
learns more per step but gets fewer steps. Run it on a quiet machine, one cell at a time.

``--nanogpt DIR`` adds, after each seed's cells, nanoGPT's documented CPU configuration (4 layers x 4
heads x 128, context 64, batch 12, no dropout, AdamW lr 1e-3 with 100 warm-up iterations and cosine
decay to 1e-4, beta2 0.99, weight decay 0.1, clipping 1.0) with the ``model.py`` of a nanoGPT checkout
kept outside this repository. nanoGPT counts iterations, not minutes, so its ``max_iters`` (and
``lr_decay_iters``) is what the budget buys at the speed of its first 50 iterations, and training also
stops when the budget is spent. It reads the same split and is scored by the same evaluator.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from transformers_lite.data.shakespeare import get_shifted_batch, split_text
from transformers_lite.evaluation.metrics import language_model_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from common import DATA, emit  # noqa: E402

TEXT = DATA / "tinyshakespeare" / "input.txt"
TLITE = [sys.executable, "-m", "transformers_lite"]
PRESETS = ("post-gpt", "baby-gpt", "small-gpt")  # 44 k, 0.8 M and 2.7 M parameters (tlite summary NAME)


def cell(preset: str, minutes: float, seed: int, folder: Path, extra: tuple[str, ...] = ()) -> dict:
    """Train one preset for ``minutes`` (with the ``extra`` options of ``tlite train``) and score it on the
    validation split."""
    out = folder / f"{preset}-{minutes:g}min-seed{seed}{'-' + '_'.join(extra).replace('-', '') if extra else ''}"
    command = [*TLITE, "train", "generator", "--text", str(TEXT), "--preset", preset, *extra]
    command += ["--max-minutes", str(minutes), "--seed", str(seed), "--out", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    scores = json.loads(
        subprocess.run([*TLITE, "evaluate", str(out), "--json"], check=True, capture_output=True).stdout
    )
    history = json.loads((out / "history.json").read_text())
    recorded = json.loads((out / "hyperparameters.json").read_text())
    return {
        "preset": preset,
        **({"chose": recorded["notes"].split(":")[0].removeprefix("--preset auto chose ")} if preset == "auto" else {}),
        "parameters": recorded["parameters"]["trainable"],
        "minutes": minutes,
        "seed": seed,
        "steps": history[-1]["step"] if history else None,
        "val_loss": round(scores["loss"], 4),
        "command": " ".join(["tlite", *command[3:-2]]),
    }


def nanogpt_cell(nanogpt: Path, minutes: float, seed: int) -> dict:
    """nanoGPT's CPU configuration on the same split, for ``minutes`` of training, scored like the cells."""
    spec = importlib.util.spec_from_file_location("nanogpt_model", nanogpt / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = TEXT.read_text(encoding="utf-8")
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    train, val = split_text(torch.tensor([index[c] for c in text]), 0.1)
    torch.manual_seed(seed)
    config = module.GPTConfig(block_size=64, vocab_size=len(chars), n_layer=4, n_head=4, n_embd=128, dropout=0.0)
    model = module.GPT(config)
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.99), "cpu")
    rng = torch.Generator().manual_seed(seed)
    lr, min_lr, warmup, max_iters, budget = 1e-3, 1e-4, 100, None, minutes * 60

    def rate(it: int) -> float:  # nanoGPT's get_lr: linear warm-up, then cosine to min_lr at max_iters
        if it < warmup:
            return lr * (it + 1) / (warmup + 1)
        ratio = min((it - warmup) / max(max_iters - warmup, 1), 1.0)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)

    start, it = time.perf_counter(), 0
    while max_iters is None or (it < max_iters and time.perf_counter() - start < budget):
        for group in optimizer.param_groups:
            group["lr"] = rate(it)
        x, y = (t.contiguous() for t in get_shifted_batch(rng, train, 64, 12))  # (B, T) each; nanoGPT views them
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        it += 1
        if it == 50:  # within the warm-up: the schedule's end is not used yet
            max_iters = int(50 / (time.perf_counter() - start) * budget)

    class Logits(torch.nn.Module):  # nanoGPT returns every position's logits only when given targets
        def __init__(self) -> None:
            super().__init__()
            self.gpt = model

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.gpt(x, torch.zeros_like(x))[0]  # (B, T, V)

    model.eval()
    with torch.no_grad():
        loss, _ = language_model_loss(Logits(), val.contiguous(), 64)
    parameters = sum(p.numel() for p in model.parameters())
    return {
        "preset": "nanoGPT cpu",
        "parameters": parameters,
        "minutes": minutes,
        "seed": seed,
        "steps": it,
        "val_loss": round(loss, 4),
        "command": f"{__file__} --nanogpt DIR (model.py of nanoGPT)",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--minutes", nargs="+", type=float, default=[2, 5, 15])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--keep", metavar="DIR", help="keep the runs in DIR (default: a temporary folder)")
    parser.add_argument("--nanogpt", metavar="DIR", type=Path, help="a nanoGPT checkout: its CPU configuration too")
    parser.add_argument(
        "--options",
        action="append",
        default=None,
        metavar="'OPTIONS'",
        help="also train each cell with these `tlite train` options (quoted; repeat for several variants), "
        "alternating with the preset as it is",
    )
    args = parser.parse_args()
    variants = [(), *(tuple(shlex.split(o)) for o in args.options or [])]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        for minutes in args.minutes:
            for seed in args.seeds:
                for preset in args.presets:
                    for extra in variants:
                        emit(**cell(preset, minutes, seed, folder, extra), options=" ".join(extra))
                if args.nanogpt:
                    emit(**nanogpt_cell(args.nanogpt, minutes, seed))


if __name__ == "__main__":
    main()

"""Character-GPT benchmarks on tiny Shakespeare: training throughput and the trainer's overhead, the KV
cache against no cache, and the README's GPT results.

    .venv/bin/python benchmarks/bench_gpt.py throughput   # training tokens/s, trainer overhead
    .venv/bin/python benchmarks/bench_gpt.py snapshots    # training with the timeline's snapshots vs without
    .venv/bin/python benchmarks/bench_gpt.py generation   # KV cache vs no cache at context 256
    .venv/bin/python benchmarks/bench_gpt.py quality      # the README commands, 3 random seeds (~20 minutes)
    .venv/bin/python benchmarks/bench_gpt.py quality --only post-gpt --steps-per-second 33   # a slower machine

Prints one JSON line per measurement.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

import torch
from common import DATA, Throttle, emit

from transformers_lite import build_model, get_preset
from transformers_lite.generation.generate import generate_tokens
from transformers_lite.tasks.generator import GeneratorSettings, GeneratorTask
from transformers_lite.training.optim import make_optimizer
from transformers_lite.training.trainer import TrainConfig, Trainer

TEXT = DATA / "tinyshakespeare" / "input.txt"
CONFIGS = {"baby-gpt": ("baby-gpt", 12), "post-gpt": ("post-gpt-original", 32)}  # post-gpt's size, dropout 0.1


def bare_loop(task: GeneratorTask, config, steps: int) -> float:  # noqa: ANN001
    torch.manual_seed(0)
    model = build_model(config)
    opt = make_optimizer(model, 1e-3)
    model.train()
    start = time.perf_counter()  # timed like the trainer: first step included
    for i in range(steps):
        loss = task.loss(model, task.batch(i))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
    return time.perf_counter() - start


def trainer_loop(task: GeneratorTask, config, steps: int, eval_every: int = 0, callbacks=()) -> float:  # noqa: ANN001
    torch.manual_seed(0)
    cfg = TrainConfig(max_steps=steps, eval_every=eval_every, warmup_steps=10)
    trainer = Trainer(build_model(config), task, cfg, log=lambda *_: None, callbacks=list(callbacks))
    task.evaluate = lambda model, split="val": {}  # measure the loop (and the snapshots), not the evaluations
    state = trainer.fit()
    return state.history[-1]["wall_s"]  # elapsed training time, taken before evaluation


def throughput(steps: int) -> None:
    for name, (preset, batch) in CONFIGS.items():
        config = get_preset(preset).model
        task = GeneratorTask.prepare(GeneratorSettings(str(TEXT), batch_size=batch, eval_tokens=1000), config)
        config = task.model_config(config)
        bare, wrapped = [], []
        for _ in range(3):  # interleaved, best of three: the machine's noise hits both alike
            bare.append(bare_loop(task, config, steps))
            wrapped.append(trainer_loop(task, config, steps))
        bare, wrapped = min(bare), min(wrapped)
        tokens = steps * batch * config.max_length
        emit(
            benchmark="train_throughput",
            config=name,
            batch=f"{batch}x{config.max_length}",
            dropout=config.dropout,
            bare_tokens_per_s=round(tokens / bare),
            trainer_tokens_per_s=round(tokens / wrapped),
            trainer_overhead_pct=round(100 * (wrapped / bare - 1), 2),
        )


def snapshot_cost(steps: int, every: int) -> None:
    """The trainer with the timeline's snapshots (``Timeline``: step 0 and one per evaluation, every
    ``every`` steps; the presets evaluate every 1,000) against without, interleaved, best of three."""
    from transformers_lite.inspect.timeline import Timeline

    for name, (preset, batch) in CONFIGS.items():
        config = get_preset(preset).model
        task = GeneratorTask.prepare(GeneratorSettings(str(TEXT), batch_size=batch, eval_tokens=1000), config)
        config = task.model_config(config)
        off, on = [], []
        for _ in range(3):
            off.append(trainer_loop(task, config, steps, every))
            with tempfile.TemporaryDirectory() as tmp:
                on.append(trainer_loop(task, config, steps, every, [Timeline(tmp, task, 16)]))
                taken = len(list((Path(tmp) / "snapshots").glob("step-*.json")))
        emit(
            benchmark="snapshot_cost",
            config=name,
            steps=steps,
            eval_every=every,
            snapshots=taken,
            off_s=round(min(off), 2),
            on_s=round(min(on), 2),
            overhead_pct=round(100 * (min(on) / min(off) - 1), 2),
        )


def generation(tokens: int) -> None:
    config = get_preset("baby-gpt").model.replace(max_length=256)
    torch.manual_seed(0)
    model = build_model(config).eval()
    # a one-token prompt growing to `tokens` (window 1..tokens), then 500 tokens after a full
    # 256-token prompt (the window slides; the cache refills every 64 tokens)
    for prompt, n in ((torch.tensor([1]), tokens), (torch.randint(0, config.vocab_size, (256,)), 500)):
        _generation_case(model, prompt, n)


def _generation_case(model, prompt: torch.Tensor, tokens: int) -> None:  # noqa: ANN001
    for cache in (True, False):
        list(generate_tokens(model, prompt, 5, use_cache=cache))
    times: dict[bool, list[float]] = {True: [], False: []}
    outputs = {}
    for _ in range(3):  # median of three, interleaved
        for cache in (True, False):
            start = time.perf_counter()
            outputs[cache] = list(generate_tokens(model, prompt, tokens, temperature=1.0, seed=1, use_cache=cache))
            times[cache].append(time.perf_counter() - start)
    assert outputs[True] == outputs[False], "cached and uncached generation differ"
    cached, uncached = sorted(times[True])[1], sorted(times[False])[1]
    emit(
        benchmark="generation",
        config="baby-gpt size, context 256",
        prompt_tokens=len(prompt),
        new_tokens=tokens,
        cached_tokens_per_s=round(tokens / cached),
        uncached_tokens_per_s=round(tokens / uncached),
        speedup=round(uncached / cached, 2),
    )


# the README's commands, exactly; a throttled copy emulates a machine where 4 minutes buy ~8,000 steps
README = {
    "post-gpt": ["train", "generator", "--text", str(TEXT), "--preset", "post-gpt", "--max-minutes", "4"],
    "baby-gpt": ["train", "generator", "--text", str(TEXT), "--preset", "baby-gpt", "--max-minutes", "2"],
}


def quality(only: str | None = None, seeds: str = "0,1,2", throttle: float | None = None) -> None:
    """Each README command once per random seed (``--seed N`` appended), through the CLI's own code path;
    ``throttle`` caps the step rate (``common.Throttle``) to emulate a slower machine."""
    from transformers_lite.cli import train
    from transformers_lite.cli.main import build_parser

    for name, command in README.items():
        if only and name != only:
            continue
        losses = []
        for seed in (int(s) for s in seeds.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                args = [*command, "--seed", str(seed), "--out", str(Path(tmp) / "run")]
                print(
                    f"# tlite {' '.join(args[:-2])}" + (f"  (capped at {throttle:g} steps/s)" if throttle else ""),
                    flush=True,
                )
                assert (
                    train.run(build_parser().parse_args(args), callbacks=[Throttle(throttle)] if throttle else []) == 0
                )
                history = json.loads((Path(tmp) / "run" / "history.json").read_text())
            last = history[-1]
            losses.append(last["val_loss"])
            emit(
                benchmark="quality",
                command=" ".join(command[2:]).replace(str(TEXT), "input.txt"),
                seed=seed,
                steps_per_second_cap=throttle,
                steps=last["step"],
                wall_s=last["wall_s"],
                val_loss=round(last["val_loss"], 4),
                val_perplexity=round(last["val_perplexity"], 3),
            )
        mean = sum(losses) / len(losses)
        emit(
            benchmark="quality-mean",
            command=" ".join(command[2:]).replace(str(TEXT), "input.txt"),
            seeds=seeds,
            steps_per_second_cap=throttle,
            val_loss=round(mean, 4),
            val_perplexity=round(math.exp(mean), 3),
            per_seed_val_loss=[round(x, 4) for x in losses],
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("throughput", "snapshots", "generation", "quality", "all"))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=250)
    parser.add_argument("--only", choices=tuple(README), help="quality: run one README command")
    parser.add_argument("--seeds", default="0,1,2", help="quality: random seeds, comma-separated")
    parser.add_argument(
        "--steps-per-second",
        type=float,
        default=None,
        help="quality: cap the step rate, emulating a slower machine (33 ~ 8,000 steps in 4 min)",
    )
    args = parser.parse_args()
    if args.what in ("throughput", "all"):
        throughput(args.steps)
    if args.what in ("snapshots", "all"):
        snapshot_cost(args.steps * 2, args.steps // 2)  # 5 snapshots: step 0 and every quarter
    if args.what in ("generation", "all"):
        generation(args.tokens)
    if args.what in ("quality", "all"):
        quality(args.only, args.seeds, args.steps_per_second)


if __name__ == "__main__":
    main()

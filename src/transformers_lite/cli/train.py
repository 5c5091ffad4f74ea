"""``tlite train classifier|generator|seq2seq``: train a model, or resume a run."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

import torch

from ..config import PRESETS, apply_overrides, get_preset, load_config
from ..models import build_model
from ..tasks import TASKS, task_module
from ..training.rundir import new_run_dir
from ..training.trainer import TrainConfig, Trainer
from .common import add_device, resolve_device

DEFAULT_PRESET = {"classifier": "classifier", "generator": "seed-gpt", "seq2seq": "seq2seq-small"}
EXAMPLES = {
    "classifier": "tlite train classifier --train train.jsonl --val dev.jsonl --labels 5",
    "generator": "tlite train generator --text input.txt --preset seed-gpt --max-minutes 4",
    "seq2seq": "tlite train seq2seq --train-src train.de.gz --train-tgt train.en.gz --val-src val.de.gz "
               "--val-tgt val.en.gz",
}
# command-line flag -> TrainConfig field (None = leave the default)
TRAIN_FLAGS = ("lr", "weight_decay", "schedule", "warmup_steps", "min_lr_ratio", "grad_clip", "accumulate", "epochs",
               "max_steps", "max_minutes", "stop_at", "eval_every", "checkpoint_every", "patience")


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(name, help="train a model (classifier, generator or seq2seq)",
                       description="Train one of the three model families; every run gets its own directory.",
                       epilog="examples:\n  " + "\n  ".join(EXAMPLES.values()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    tsub = p.add_subparsers(dest="task", metavar="TASK")
    for task in TASKS:
        try:
            module = task_module(task)
        except ModuleNotFoundError:
            continue
        t = tsub.add_parser(task, help=f"train the {task}", epilog=f"example: {EXAMPLES[task]}",
                            formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        t.add_argument("--preset", default=None, help=f"model preset ({', '.join(sorted(PRESETS))}); "
                       f"default {DEFAULT_PRESET[task]}")
        t.add_argument("--config", help="model config JSON (instead of a preset)")
        t.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a model config field")
        t.add_argument("--seed", type=int, default=None, help="random seed (default 0)")
        t.add_argument("--out", help="run directory (default outputs/YYYYmmdd_HHMM)")
        t.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last checkpoint")
        add_device(t)
        t.add_argument("--dist-timeout", type=float, default=300.0,
                       help="torchrun: seconds before a rank that stopped answering ends the job")
        t.add_argument("--batch-size", type=int, default=None)
        t.add_argument("--val-fraction", type=float, default=None, help="validation split when no validation file")
        g = t.add_argument_group("training")
        g.add_argument("--lr", type=float)
        g.add_argument("--weight-decay", type=float)
        g.add_argument("--schedule", choices=("cosine", "inverse_sqrt", "constant"))
        g.add_argument("--warmup-steps", type=int)
        g.add_argument("--min-lr-ratio", type=float)
        g.add_argument("--grad-clip", type=float, help="0 disables clipping")
        g.add_argument("--accumulate", type=int, help="micro-batches per optimizer step")
        g.add_argument("--epochs", type=float)
        g.add_argument("--max-steps", type=int)
        g.add_argument("--max-minutes", type=float, help="wall-clock budget; ends cleanly with a checkpoint")
        g.add_argument("--stop-at", type=int, help="pause at this step with a checkpoint (resume later, same schedule)")
        g.add_argument("--eval-every", type=int, help="optimizer steps between evaluations (0: epoch ends only)")
        g.add_argument("--checkpoint-every", type=int)
        g.add_argument("--patience", type=int, help="early stopping after N evaluations without improvement")
        g.add_argument("--bf16", action="store_true", default=None, help="bfloat16 autocast")
        g.add_argument("--compile", action="store_true", default=None, help="torch.compile the model")
        module.add_arguments(t)
        t.set_defaults(func=run, task_name=task)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def _train_config(args: argparse.Namespace, base: dict, seed: int, device: str, task_defaults: dict) -> TrainConfig:
    known = {f.name for f in fields(TrainConfig)}
    values = {k: v for k, v in base.items() if k in known and k != "stop_at"}
    values.update({k: v for k, v in task_defaults.items() if k not in base})
    for flag in TRAIN_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            values[flag] = value
    for flag in ("bf16", "compile"):
        if getattr(args, flag):
            values[flag] = True
    if not base and not any(values.get(k) is not None for k in ("epochs", "max_steps", "max_minutes")):
        values["epochs"] = task_defaults.get("epochs", 1)
    values.update(seed=seed, device=device)
    return TrainConfig(**values)


def run(args: argparse.Namespace) -> int:
    from ..training.distributed import broadcast, cleanup, setup

    module = task_module(args.task_name)
    ctx, device = setup(resolve_device(args.device), args.dist_timeout)
    try:
        return _run(args, module, ctx, device, broadcast)
    finally:
        cleanup(ctx)


def _run(args: argparse.Namespace, module, ctx, device: str, broadcast) -> int:  # noqa: ANN001
    from ..tokenizers.index import load_tokenizer

    if args.resume:
        run_dir = Path(args.resume)
        hyper_path = run_dir / "hyperparameters.json"
        if not hyper_path.is_file() or not (run_dir / "config.json").is_file():
            raise ValueError(f"--resume {run_dir}: not a run directory (no hyperparameters.json/config.json)")
        hyper = json.loads(hyper_path.read_text())
        if hyper.get("task") != args.task_name:
            raise ValueError(f"--resume {run_dir}: that run trained a {hyper.get('task')}, not a {args.task_name}")
        if args.preset or args.config or args.set:
            raise ValueError("--resume continues the recorded model; --preset/--config/--set cannot change it")
        config = load_config(run_dir / "config.json")
        seed = hyper["seed"]
        tokenizers = {p.stem: load_tokenizer(p) for p in run_dir.glob("*tokenizer.json")}
        task = module.build(args, config, seed, recorded=hyper["data"], **_run_tokenizers(tokenizers))
        train_cfg = _train_config(args, hyper["train"], seed, device, {})
        extra = {k: hyper[k] for k in ("preset",) if k in hyper}
    else:
        if args.config:
            config = load_config(args.config)
            preset = None
        else:
            preset = args.preset or DEFAULT_PRESET[args.task_name]
            config = get_preset(preset)
        if config.family != args.task_name:
            raise ValueError(f"preset/config is a {config.family} model, not a {args.task_name}")
        config = apply_overrides(config, args.set)
        seed = 0 if args.seed is None else args.seed
        task = module.build(args, config, seed)
        config = task.adapt_config(config)
        train_cfg = _train_config(args, {}, seed, device, getattr(module, "TRAIN_DEFAULTS", {}))
        run_dir = broadcast(new_run_dir(args.out) if ctx.is_main else None, ctx)  # rank 0 names the run
        extra = {"preset": preset}
    torch.manual_seed(seed)  # weight initialisation (a resumed run loads its weights instead)
    model = build_model(config)
    trainer = Trainer(model, task, train_cfg, run_dir, config, resume=bool(args.resume), extra=extra, dist_ctx=ctx)
    trainer.fit()
    return 0


def _run_tokenizers(tokenizers: dict) -> dict:
    if "tokenizer" in tokenizers:
        return {"run_tokenizer": tokenizers["tokenizer"]}
    return {"run_tokenizers": tokenizers} if tokenizers else {}

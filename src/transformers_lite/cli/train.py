"""``tlite train classifier|generator|seq2seq``: train a model, or resume a run.

The options are the fields of ``TrainConfig`` and of the task's settings; their defaults come from
the preset's recipe (``recipes``). This module only parses, builds an ``Experiment`` and runs it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
from pathlib import Path

from ..config import PRESETS, apply_overrides, load_config
from ..devices import resolve_device
from ..errors import ConfigError
from ..experiment import Experiment, print_config, resume_experiment
from ..recipes import DEFAULT_PRESET, get_recipe, training_model
from ..tasks import TASKS
from ..training.distributed import cleanup, setup
from .options import add_options, given

EXAMPLES = {
    "classifier": "tlite train classifier --train train.jsonl --val dev.jsonl --labels 5",
    "generator": "tlite train generator --text input.txt --preset seed-gpt --max-minutes 4",
    "seq2seq": "tlite train seq2seq --train-src train.de.gz --train-tgt train.en.gz --val-src val.de.gz "
    "--val-tgt val.en.gz",
    "mlm": "tlite train mlm --reviews train.jsonl --out outputs/mlm && "
    "tlite train classifier --train train.jsonl --val dev.jsonl --init-from outputs/mlm",
}
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + signal number, as shells report them


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(
        name,
        help="train a model (classifier, generator, seq2seq, or mlm: pretrain an encoder)",
        description="Train one of the three model families; every run gets its own directory.",
        epilog="examples:\n  " + "\n  ".join(EXAMPLES.values()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tsub = p.add_subparsers(dest="task", metavar="TASK")
    for task in TASKS:
        preset = DEFAULT_PRESET[task]
        recipe = get_recipe(preset)
        t = tsub.add_parser(
            task,
            help=f"train the {task}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            description=f"Train the {task}. Defaults shown are the recipe of the default preset "
            f"({preset}); other presets have their own: add --print-config to see "
            "every effective setting.",
            epilog=f"example: {EXAMPLES[task]}",
        )
        names = [f for f in PRESETS if PRESETS[f].family == task]
        t.add_argument("--preset", help=f"model and recipe: {', '.join(names)} (default: {preset})")
        t.add_argument(
            "--recipe",
            metavar="NAME",
            help="training defaults: another preset's recipe, or 'seed' for the posts' own setup "
            "(plain Adam at a constant rate, batch 32, 10 epochs; with the seed's model unless --preset is given)"
            if task in ("classifier", "generator")
            else "training defaults: another preset's recipe (default: the preset's own)",
        )
        t.add_argument("--config", metavar="FILE", help="model config JSON instead of a preset")
        t.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override a model config field, e.g. --set n_blocks=6",
        )
        t.add_argument(
            "--run-config",
            metavar="FILE",
            help="train from a file written by --print-config (options given here override it)",
        )
        t.add_argument("--print-config", action="store_true", help="print every effective setting as JSON and exit")
        t.add_argument("--out", metavar="DIR", help="run directory (default: outputs/YYYYmmdd_HHMM)")
        t.add_argument(
            "--resume",
            metavar="RUN_DIR",
            help="continue a run from its last checkpoint; the original command with --resume added is accepted",
        )
        t.add_argument(
            "--dist-timeout",
            type=float,
            default=300.0,
            help="torchrun: seconds before a rank that stopped answering ends the job (default: 300)",
        )
        train_names = add_options(t.add_argument_group("training"), recipe.train)
        data_names = add_options(t.add_argument_group("data"), recipe.data)
        t.set_defaults(func=run, task_name=task, option_names=train_names + data_names)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def _named_model(args: argparse.Namespace):  # noqa: ANN202
    """The model config that --preset or --config names (before --set), or None."""
    if not (args.preset or args.config):
        return None
    config = load_config(args.config) if args.config else training_model(args.preset)
    if config.family != args.task_name:
        raise ConfigError(f"preset/config is a {config.family} model, not a {args.task_name}")
    return config


def build_experiment(args: argparse.Namespace) -> Experiment:
    """The experiment the command line describes (a new run, a --run-config file, or a resumed run)."""
    if args.preset and args.config:
        raise ConfigError("give either --preset or --config, not both")
    options = given(args, args.option_names)
    if args.resume:
        if args.run_config or args.out:
            raise ConfigError("--resume continues a run in its own directory; drop --run-config/--out")
        return resume_experiment(
            args.resume, args.task_name, model=_named_model(args), model_overrides=args.set, **options
        )
    if args.run_config:
        path = Path(args.run_config)
        if not path.is_file():
            raise FileNotFoundError(f"run config not found: {path}")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ConfigError(f"{path}: not valid JSON ({err})") from None
        experiment = Experiment.from_dict(data, path)
        if experiment.task != args.task_name:
            raise ConfigError(f"{path} describes a {experiment.task} run, not a {args.task_name}")
        model = apply_overrides(_named_model(args) or experiment.model, args.set)
        return dataclasses.replace(experiment, model=model, preset=args.preset or experiment.preset).with_settings(
            **options
        )
    model = load_config(args.config) if args.config else None
    return Experiment.from_preset(
        args.task_name, args.preset, recipe=args.recipe, model=model, model_overrides=args.set, **options
    )


def run(args: argparse.Namespace, callbacks: list = ()) -> int:  # noqa: ANN001 - training.callbacks.Callback
    """Train as the command line says; ``callbacks`` are added to the trainer's (tests use this)."""
    experiment = build_experiment(args)
    if args.print_config:
        print(print_config(experiment))
        return 0
    ctx, device = setup(resolve_device(experiment.train.device), args.dist_timeout)
    try:
        result = experiment.with_settings(device=device).run(
            args.out, callbacks=callbacks, dist_ctx=ctx, resume_dir=args.resume
        )
    finally:
        cleanup(ctx)
    return EXIT_CODES.get(result.interrupted_by, 0)

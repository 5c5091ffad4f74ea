"""Train a model (classifier, generator, seq2seq, or mlm: pretrain an encoder).

Train one of the model families; every run gets its own directory.
"""

# What to train is one recipe (`recipes`): `--preset` names one (default: the family's), `--config`
# reads one that `--print-config` printed (or a model config alone), `--set` changes model fields and
# every other option a training or data setting; `--resume` continues a run's recorded recipe. This
# module only parses, builds the `Recipe` and runs it.

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence

from ..budget import Budget
from ..devices import resolve_device
from ..errors import ConfigError, DataError
from ..families import FAMILIES
from ..recipes import ALIASES, ORIGINAL, Recipe, get_preset, presets_of
from ..recipes.auto import Choice
from ..recipes.choose import AUTO_FAMILIES, choose_recipe
from ..training.distributed import cleanup, setup
from .common import command, show_help
from .options import add_options, given

EXIT_CODES: dict[int, int] = {
    signal.SIGINT: 130,
    signal.SIGTERM: 143,
    signal.SIGHUP: 129,
}  # 128 + signal number, as shells do
OLD_NAMES = ", ".join(f"{old} = {new}" for old, new in ALIASES.items())


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__, *(f.command for f in FAMILIES.values()))
    tsub = p.add_subparsers(dest="family", metavar="FAMILY")
    for fam in FAMILIES.values():
        preset = fam.default_preset
        recipe = get_preset(preset)
        t = command(
            tsub,
            fam.name,
            f"Train the {fam.title}.\n\nDefaults shown are those of the default preset ({preset}); "
            + (f"with --max-minutes it starts from {fam.budget_preset}; " if fam.budget_preset else "")
            + "other presets have their own: add --print-config to see exactly what will be trained.",
            fam.command,
        )
        names = presets_of(fam.name)
        old = ", ".join(f"{o} = {n}" for o, n in ALIASES.items() if n in names)
        auto = (
            ", auto (chosen on your validation data within --max-minutes, all of it)"
            if fam.name in AUTO_FAMILIES
            else ""
        )
        t.add_argument(
            "--preset",
            help=f"what to train: {', '.join(names)}{auto} (default: {preset}"
            + (f"; {fam.budget_preset} with --max-minutes)" if fam.budget_preset else ")")
            + (f"; deprecated (0.2's names, still read): {old}" if old else ""),
        )
        t.add_argument(
            "--config",
            metavar="FILE",
            help="train the recipe a --print-config printout holds (or a model config JSON with the preset's "
            "training); options given here override it",
        )
        t.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="change a model config field, e.g. --set n_blocks=6",
        )
        t.add_argument(
            "--print-config", action="store_true", help="print the recipe that would be trained, as JSON, and exit"
        )
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
        original = ORIGINAL.get(fam.name)
        t.add_argument(  # 0.2's option, still read
            "--recipe",
            metavar="NAME",
            help="deprecated (0.2's option; use --preset): the training and data settings of preset NAME"
            + (f"; 'seed' = --preset {original} (the post's own training)" if original else ""),
        )
        train_names = add_options(t.add_argument_group("training"), recipe.train)
        data_names = add_options(t.add_argument_group("data"), recipe.data)
        t.set_defaults(func=run, option_names=train_names + data_names)
    p.set_defaults(func=show_help(p))


def build_recipe(args: argparse.Namespace, budget: Budget | None = None) -> Choice:
    """The recipe the command line describes (a new run, or a resumed one), as ``recipes`` chooses it;
    ``--preset auto`` races within ``budget`` (default: begun now)."""
    options = given(args, args.option_names)
    if args.resume and args.out:
        raise ConfigError("--resume continues a run in its own directory; drop --config/--out")
    if budget is None and args.preset == "auto" and args.max_minutes and not args.resume:
        budget = Budget.start(args.max_minutes)
    return choose_recipe(
        args.family,
        preset=args.preset,
        config_file=args.config,
        old_recipe=args.recipe,
        resume=args.resume,
        model_overrides=args.set or [],
        settings=options,
        budget=budget,
        log=lambda line: print(line, file=sys.stderr),
    )


def print_config(recipe: Recipe) -> str:
    """``--print-config``: the recipe as JSON, with the model fields the data decides computed from the
    data; when the data cannot be read yet, those fields keep the preset's values and are named."""
    try:
        printed = recipe.resolved().to_dict()
    except (DataError, ConfigError, FileNotFoundError) as err:
        printed = recipe.to_dict()
        printed["set_from_data"] = {
            "fields": list(recipe.model.data_fields),
            "note": f"these model fields are set from the data when training starts (not read now: {err})",
        }
    return json.dumps(printed, indent=2)


def run(args: argparse.Namespace, callbacks: Sequence = ()) -> int:  # noqa: ANN001 - training.callbacks.Callback
    """Train as the command line says; ``callbacks`` are added to the trainer's (tests use this). With
    --max-minutes the budget starts with the process: its minutes are the command's wall time."""
    budget = None if args.max_minutes is None else Budget.start(args.max_minutes, from_process_start=True)
    if budget is not None:
        budget.lap("starting")
    choice = build_recipe(args, budget)
    if args.print_config:
        print(print_config(choice.recipe))
        return 0
    recipe = choice.recipe
    if budget is not None and choice.race:
        budget.lap("choosing (--preset auto)")
    ctx, device = setup(resolve_device(recipe.train.device), args.dist_timeout)
    try:
        recipe = recipe.override(device=device)
        result = recipe.run(
            args.out,
            callbacks=callbacks,
            dist_ctx=ctx,
            resume_dir=args.resume,
            budget=budget,
            head=choice.head,
            race=choice.race,
        )
    finally:
        cleanup(ctx)
    return EXIT_CODES.get(result.interrupted_by, 0) if result.interrupted_by is not None else 0

"""What a new run writes before its first step (``hyperparameters.json``, ``config.json``, the tokenizers),
and the check that a resumed run still reads the data it began with."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..atomic import atomic_write_json, read_json
from ..budget import Budget
from ..errors import RunError
from ..runs.files import FORMAT
from ..runs.manifest import HYPERPARAMETERS, MANIFEST, record
from ..summary import count_parameters
from ..training.trainer import Trainer
from ..version import __version__


def budget_record(budget: Budget, trained: float = 0.0) -> dict[str, Any]:
    """What ``hyperparameters.json`` says of the time budget as training begins: the minutes, what was spent
    before (by phase), and the seconds of training it allows, counting the ``trained`` seconds of a race's
    winner (what ``tlite serve`` counts the run's elapsed time against)."""
    return {
        "minutes": budget.minutes,
        "spent_before_training_s": {phase: round(s, 2) for phase, s in budget.spending.items()},
        "training_s": round(trained + budget.left(), 2),
    }


def check_data_unchanged(run_dir: Path, now: dict[str, Any]) -> None:
    """Refuse to resume when a data file differs from the one the run started with (sha256)."""
    recorded = read_json(run_dir / "hyperparameters.json", "hyperparameters file").get("data", {})
    for key, digest in recorded.items():
        if key.endswith("_sha256") and now.get(key) not in (None, digest):
            name = key.removesuffix("_sha256")
            raise RunError(
                f"{now.get(name)} changed since {run_dir} started (sha256 differs); restore the original "
                "file, or start a new run"
            )


def write_run_files(
    run_dir: Path,
    recipe: Any,  # noqa: ANN401 - the Recipe as trained (``recipe`` imports this module)
    task: Any,  # noqa: ANN401
    model: torch.nn.Module,
    trainer: Trainer,
    budget: Budget | None = None,
    trained: float = 0.0,
    race: Sequence[dict[str, Any]] = (),
) -> None:
    """``hyperparameters.json`` first (the recipe as trained: everything a resume needs, plus the data's
    paths and sha256, versions, machine, command, and what the time budget had spent before training and
    leaves it), then ``config.json`` and the tokenizers: a run killed in between can still be resumed."""
    trainable, fixed = count_parameters(model)
    atomic_write_json(
        run_dir / "hyperparameters.json",
        {
            "format": FORMAT,
            "manifest": MANIFEST,  # loading refuses the run if it goes missing (runs/manifest.py)
            **recipe.to_dict(),
            "seed": recipe.train.seed,
            "data": task.describe(),
            "parameters": {"trainable": trainable, "non_trainable": fixed},
            "steps_per_epoch": trainer.steps_per_epoch,
            "total_steps": trainer.total_steps,
            **({} if budget is None else {"budget": budget_record(budget, trained)}),
            **({"race": list(race)} if race else {}),
            "versions": {
                "transformers_lite": __version__,
                "torch": torch.__version__,
                "python": platform.python_version(),
            },
            "machine": {
                "processor": platform.processor() or platform.machine(),
                "cpus": os.cpu_count(),
                "device": str(trainer.device),
            },
            "command": sys.argv,
            "distributed": {
                "world_size": trainer.dist.world,
                "global_batch": f"per-rank batch x {trainer.dist.world} ranks x {recipe.train.accumulate}",
            },
        },
    )
    recipe.model.to_json(run_dir / "config.json")
    for stem, tokenizer in task.tokenizers().items():
        tokenizer.save(run_dir / f"{stem}.json")
    record(run_dir, [HYPERPARAMETERS, "config.json", *(f"{stem}.json" for stem in task.tokenizers())])

"""What each moment of a run's life relies on, and the one check that names the file that is missing.

A training whose folder was deleted under it used to end with "run saved" and exit 0 with nothing on
disk, and a run without ``hyperparameters.json`` was read as one that "recorded no text file". So every
moment that relies on a run's files asks ``require(run_dir, moment)`` first:

* ``load``: ``config.json``, the tokenizer file(s) its family reads, weights (``model.safetensors`` or a
  complete checkpoint) — ``runs.loaded.load``;
* ``settings``: ``hyperparameters.json``, the recorded settings (data files, seed, validation split)
  that ``evaluate``, ``classify --input`` and the inspector read — ``LoadedRun.hyperparameters``;
* ``resume``: ``hyperparameters.json``, and once a checkpoint exists the config and tokenizer(s) it was
  trained with; a run that has trained (its final weights, its history) but has no complete checkpoint
  left needs one, or resuming would train it again from step 0 over its weights —
  ``recipes.resume.recorded_recipe`` and ``recipes.recipe.Recipe.run``;
* ``saved``: all of the above, plus ``manifest.json``, the final weights and a complete checkpoint, checked
  after the last write and before "run saved" — ``recipes.recipe.Recipe.run``.

A run without weights is not always a damaged one: while a process trains it (it holds ``RUN/.lock``,
``is_training``), a run has its settings, config and tokenizers from its start but no weights until its
first checkpoint. ``require`` says so instead of "copy the whole run folder again", and the inspector
shows such a run from what it has written so far (``server/live.py``).
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

from ..config import CONFIGS
from ..errors import RunError
from .files import latest_checkpoint
from .manifest import MANIFEST

WEIGHTS = "model.safetensors (or a complete checkpoint)"
CHECKPOINT = "checkpoint/LATEST (a complete checkpoint)"
RUN_FILES = ("config.json", "hyperparameters.json", "checkpoint")  # any of them: a run (complete or not)
LOCK = ".lock"  # held with flock by the process training the run (``training.rundir.RunLock``)
# what only a run that finished training holds: its history and metrics are written from its first steps
# on (a run stopped before its first checkpoint has them too, and trains again from step 0 on --resume)
TRAINED = ("model.safetensors",)

ADVICE = {
    "load": "the run cannot be used without it: copy the whole run folder again, or train it again",
    "settings": "its recorded settings (data files, seed, validation split) are kept there: restore it from a "
    "copy of the run",
    "resume": "the run cannot be resumed without it: restore it, or start a new run with --out",
    "saved": "the run folder was deleted or changed while it trained, so the run was not saved: train it again",
}


def is_training(run_dir: str | Path) -> bool:
    """Whether a process holds ``run_dir``'s lock now (it is training), without waiting or taking it. The
    kernel drops the lock when that process ends however it ends, so a dead training never reads as live."""
    path = Path(run_dir) / LOCK
    if not path.is_file():
        return False
    try:
        with open(path, encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def _tokenizers(run_dir: Path) -> list[str]:
    """The tokenizer files the run's family reads (none when ``config.json`` is unreadable: named first)."""
    try:
        family = json.loads((run_dir / "config.json").read_text(encoding="utf-8")).get("family")
    except (OSError, ValueError, AttributeError):
        return []
    return [f"{name}.json" for name in CONFIGS[family].tokenizers] if family in CONFIGS else []


def missing(run_dir: str | Path, moment: str) -> list[str]:
    """The files ``moment`` (a key of ``ADVICE``) relies on that ``run_dir`` lacks, in the order they are
    written."""
    run_dir = Path(run_dir)
    if moment not in ADVICE:
        raise ValueError(f"unknown moment {moment!r}; one of {', '.join(ADVICE)}")
    needed: list[str] = []
    if moment in ("settings", "resume", "saved"):
        needed.append("hyperparameters.json")
    if moment in ("load", "saved") or (moment == "resume" and latest_checkpoint(run_dir)):
        needed += ["config.json", *_tokenizers(run_dir)]
    if moment == "saved":
        needed.append(MANIFEST)
    out = [name for name in needed if not (run_dir / name).is_file()]
    if moment == "load" and not (run_dir / "model.safetensors").is_file() and latest_checkpoint(run_dir) is None:
        out.append(WEIGHTS)
    if moment == "saved":
        out += [name for name in ("model.safetensors",) if not (run_dir / name).is_file()]
        out += [CHECKPOINT] if latest_checkpoint(run_dir) is None else []
    if moment == "resume" and trained(run_dir) and latest_checkpoint(run_dir) is None:
        out.append(CHECKPOINT)  # a run that trained: from step 0 again would write over its weights
    return out


def trained(run_dir: Path) -> list[str]:
    """The files of ``TRAINED`` the run has: it finished training, whatever its checkpoints say."""
    return [name for name in TRAINED if (run_dir / name).is_file()]


def require(run_dir: str | Path, moment: str) -> None:
    """A ``RunError`` naming every file ``moment`` relies on that ``run_dir`` lacks (the folder itself
    when it is gone), and what to do about it."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunError(f"{run_dir} is not a run directory (no such folder: deleted or moved?); {ADVICE[moment]}")
    if moment != "saved" and not any((run_dir / name).exists() for name in RUN_FILES):
        raise RunError(f"{run_dir} is not a run directory (no {', '.join(RUN_FILES)} in it)")
    lacking = missing(run_dir, moment)
    if lacking == [WEIGHTS] and is_training(run_dir):
        raise RunError(
            f"{run_dir} is still training and has no checkpoint yet: its model can be used from its first "
            "checkpoint on (written at its first evaluation, or every --checkpoint-every steps)"
        )
    if lacking == [WEIGHTS]:
        raise RunError(
            f"{run_dir}: {WEIGHTS} is missing; a run stopped before its first checkpoint trains again from step "
            f"0 with its recorded settings (tlite train --resume {run_dir}); a copied run needs its whole folder"
        )
    if lacking:
        verb = "is" if len(lacking) == 1 else "are"
        why = ""
        if moment == "resume" and CHECKPOINT in lacking:
            why = (
                f" though the run has trained ({', '.join(trained(run_dir))}), so resuming would train it again "
                "from step 0 over its weights"
            )
        raise RunError(f"{run_dir}: {', '.join(lacking)} {verb} missing{why}; {ADVICE[moment]}")

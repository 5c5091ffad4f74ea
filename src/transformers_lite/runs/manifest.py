"""A run's manifest: the sha256 of the files that must match its weights, checked on every load.

Editing ``n_heads`` in ``config.json`` or swapping two characters of ``tokenizer.json`` still gives a
model that loads (the shapes agree) and answers with garbage. So a run records, in ``manifest.json``,
the sha256 of its config, tokenizer(s) and final weights as they were written, and loading names the
first file whose contents changed since. ``trust_edited=True`` (``--trust-edited``) loads anyway,
for experiments that edit a run on purpose. A run's ``hyperparameters.json`` says that it keeps a
manifest (``"manifest": "manifest.json"``), so a deleted manifest is an error, not a run that loads
unchecked; runs of earlier releases, which kept none, load unchecked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from ..atomic import atomic_write_json, read_json
from ..errors import RunError

MANIFEST = "manifest.json"


def sha256(path: Path) -> str:
    """The file's sha256, read in 1 MiB pieces (weights can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for piece in iter(lambda: fh.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def _read(run_dir: Path) -> dict[str, str]:
    path = run_dir / MANIFEST
    if not path.is_file():
        return {}
    if not path.read_bytes().strip():
        raise RunError(
            f"{path} is empty (0 bytes of JSON; it should record the sha256 of the run's files), so an edited "
            "config, tokenizer or weights file cannot be told from the original"
        )
    data = read_json(path, "manifest")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.get("sha256", {}).values()):
        raise RunError(f"{path}: damaged manifest (expected {{'sha256': {{file: hex digest}}}})")
    return dict(data.get("sha256", {}))


def record(run_dir: str | Path, names: Iterable[str]) -> None:
    """Add (or refresh) the sha256 of ``names`` (files of ``run_dir``) to the run's manifest."""
    run_dir = Path(run_dir)
    known = _read(run_dir)
    known.update({name: sha256(run_dir / name) for name in names})
    atomic_write_json(run_dir / MANIFEST, {"sha256": dict(sorted(known.items()))})


def _keeps_one(run_dir: Path) -> bool:
    """Whether the run's ``hyperparameters.json`` (when readable) says it keeps a manifest."""
    try:
        recorded = read_json(run_dir / "hyperparameters.json", "hyperparameters file")
    except (OSError, RunError):  # missing or damaged: the loaders that need it name it
        return False
    return isinstance(recorded, dict) and recorded.get("manifest") == MANIFEST


LOADING = (
    "restore it (generate, evaluate, classify, translate and inspect take --trust-edited, and load() "
    "trust_edited=True, to use the edited file anyway)"
)
RESUMING = "restore it to resume this run, or start a new run with the edited settings"


def verify(
    run_dir: str | Path, names: Iterable[str] | None = None, trust_edited: bool = False, what_to_do: str = LOADING
) -> None:
    """A ``RunError`` naming the first recorded file (of ``names``, default all) whose contents changed,
    and ``what_to_do`` about it."""
    if trust_edited:
        return
    run_dir = Path(run_dir)
    known = _read(run_dir)
    if not known and (run_dir / MANIFEST).is_file():
        raise RunError(
            f"{run_dir / MANIFEST} records no file (no sha256 in it); the run recorded its config, tokenizer and "
            f"weights files there, and without them an edited file cannot be told from the original: {what_to_do}"
        )
    if not known and _keeps_one(run_dir):
        raise RunError(
            f"{run_dir / MANIFEST} is missing; the run wrote one (its hyperparameters.json says so), and without "
            f"it an edited config, tokenizer or weights file cannot be told from the original: {what_to_do}"
        )
    for name in known if names is None else [n for n in names if n in known]:
        path = run_dir / name
        if not path.is_file():
            raise RunError(f"{path} is missing; the run recorded it in {MANIFEST}")
        if sha256(path) != known[name]:
            raise RunError(
                f"{path} was changed after the run wrote it (its sha256 differs from {MANIFEST}); the weights "
                f"were trained with the recorded file: {what_to_do}"
            )

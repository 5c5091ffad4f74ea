"""A run's manifest: the sha256 of the files that must match its weights, checked on every load.

Editing ``n_heads`` in ``config.json`` or swapping two characters of ``tokenizer.json`` still gives a
model that loads (the shapes agree) and answers with garbage. So a run records, in ``manifest.json``,
the sha256 of its config, tokenizer(s) and final weights as they were written, and loading names the
first file whose contents changed since. ``trust_edited=True`` (``--trust-edited``) loads anyway,
for experiments that edit a run on purpose. A run's ``hyperparameters.json`` says that it keeps a
manifest (``"manifest": "manifest.json"``), so a deleted manifest is an error, not a run that loads
unchecked; runs of earlier releases, which kept none, load unchecked.

Every file a run reads is in its manifest, so ``verify`` is told the files a moment reads (``names``)
and an entry removed for one of them is an error naming it, not a file that loads unchecked. Manifests
since ``"format": 2`` also list ``hyperparameters.json`` (the recorded settings ``evaluate``, ``inspect``
and the inspector read); a manifest of an earlier release (no ``format``) did not, so there its
absence is expected and the recorded settings are still checked by value (``runs.loaded``), not by
sha256: older runs load as they did.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from ..atomic import atomic_write_json, read_json, read_record
from ..errors import RunError

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 2  # 2: hyperparameters.json is listed too
HYPERPARAMETERS = "hyperparameters.json"


def sha256(path: Path) -> str:
    """The file's sha256, read in 1 MiB pieces (weights can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for piece in iter(lambda: fh.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def _shape(data: object) -> str | None:
    """What is wrong with a manifest's value, or None."""
    digests = data.get("sha256", {}) if isinstance(data, dict) else None
    fmt = data.get("format", 1) if isinstance(data, dict) else None
    if not isinstance(digests, dict) or not all(isinstance(v, str) for v in digests.values()) or type(fmt) is not int:
        return "expected {'format': 2, 'sha256': {file: hex digest}}"
    return None


def _read_all(run_dir: Path) -> tuple[dict[str, str], int]:
    """The recorded digests and the manifest's format (1 for a manifest of an earlier release, 0 for none).
    A damaged manifest is an error, left as it is (``atomic.read_record``): ``record`` never writes a
    fresh one over it."""
    path = run_dir / MANIFEST
    if path.is_file() and not path.read_bytes().strip():
        raise RunError(
            f"{path} is empty (0 bytes of JSON; it should record the sha256 of the run's files), so an edited "
            "config, tokenizer or weights file cannot be told from the original"
        )
    data = read_record(path, "manifest", _shape, lambda: None, what_to_do="restore it from a copy of the run")
    if data is None:
        return {}, 0
    return dict(data.get("sha256", {})), data.get("format", 1)


def _read(run_dir: Path) -> dict[str, str]:
    return _read_all(run_dir)[0]


def record(run_dir: str | Path, names: Iterable[str]) -> None:
    """Add (or refresh) the sha256 of ``names`` (files of ``run_dir``) to the run's manifest."""
    run_dir = Path(run_dir)
    known = _read(run_dir)
    known.update({name: sha256(run_dir / name) for name in names})
    # format 2 says hyperparameters.json is listed; a run of an earlier release that is resumed keeps format 1
    fmt = MANIFEST_FORMAT if HYPERPARAMETERS in known else 1
    atomic_write_json(run_dir / MANIFEST, {"format": fmt, "sha256": dict(sorted(known.items()))})


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
    """A ``RunError`` naming the first file (of ``names``: the files the caller reads; default all
    recorded) whose contents changed, or that a run keeping a manifest read but left out of it, and
    ``what_to_do`` about it."""
    if trust_edited:
        return
    run_dir = Path(run_dir)
    known, fmt = _read_all(run_dir)
    if not known and (run_dir / MANIFEST).is_file():
        raise RunError(
            f"{run_dir / MANIFEST} records no file (no sha256 in it); the run recorded its config, tokenizer and "
            f"weights files there, and without them an edited file cannot be told from the original: {what_to_do}"
        )
    keeps_one = _keeps_one(run_dir)
    if not fmt and keeps_one:
        raise RunError(
            f"{run_dir / MANIFEST} is missing; the run wrote one (its hyperparameters.json says so), and without "
            f"it an edited config, tokenizer or weights file cannot be told from the original: {what_to_do}"
        )
    for name in known if names is None else list(names):
        if name not in known:
            if not keeps_one or (name == HYPERPARAMETERS and fmt < MANIFEST_FORMAT):
                continue  # a run of a release that recorded no manifest (or not this file) is read unchecked
            raise RunError(
                f"{run_dir / MANIFEST} has no entry for {name}, which the run reads (the entry was removed, "
                f"so an edit of {name} cannot be told from the original): {what_to_do}"
            )
        path = run_dir / name
        if not path.is_file():
            raise RunError(f"{path} is missing; the run recorded it in {MANIFEST}")
        if sha256(path) != known[name]:
            raise RunError(
                f"{path} was changed after the run wrote it (its sha256 differs from {MANIFEST}); the weights "
                f"were trained with the recorded file: {what_to_do}"
            )

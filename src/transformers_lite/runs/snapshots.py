"""A run's training timeline as it is read: the snapshots ``inspect.timeline`` writes while a run trains
(``RUN/snapshots/step-00001200.json``), in step order, each checked against the fields the inspector
reads (``SHAPES``). Reading a run's files needs nothing of training: the inspector and the replay
(``inspect.replay``) read them here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FOLDER = "snapshots"  # the training timeline's folder, written as the run trains


def step_of(path: Path) -> int:
    """The step in a snapshot's file name (``step-00001200.json``); -1 for a name that holds none."""
    digits = path.stem.removeprefix("step-")
    return int(digits) if digits.isdigit() else -1


SHAPES = {  # what the page reads from a snapshot: each field's JSON type (all but step and scores optional)
    "step": int,
    "scores": dict,
    "tokens": list,
    "target_tokens": list,
    "attention": list,
    "token_losses": list,
    "probabilities": list,
    "label": int,
    "sample": str,
    "translation": str,
    "source": str,
    "grad_norms": dict,
    "update_norms": dict,
    "embeddings": list,
}


def read_timeline(run_dir: str | Path) -> list[dict[str, Any]]:
    """A run's snapshots in step order: a file that does not read, or whose fields are not of the shape
    the page reads (``SHAPES``; hand-edited or from another program), is left out."""
    out = []
    for path in sorted((Path(run_dir) / FOLDER).glob("step-*.json")):
        try:
            snapshot = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _well_formed(snapshot):
            out.append(snapshot)
    return out


def _well_formed(snapshot: Any) -> bool:  # noqa: ANN401
    if not isinstance(snapshot, dict) or "step" not in snapshot or "scores" not in snapshot:
        return False
    typed = all(
        isinstance(snapshot[k], kind) and not isinstance(snapshot[k], bool)
        for k, kind in SHAPES.items()
        if k in snapshot
    )
    return typed and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in snapshot["scores"].values())

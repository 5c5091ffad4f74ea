"""Checking code sent as text (the inspector's "try it yourself"), bounded: it runs in a child Python
process (``tlite exercise check NAME FILE --run RUN --json``) with a time limit, so a function that
loops, exhausts memory or kills its process costs that process only, and the answer is always a
``Verdict`` (never an exception for the server to turn into a 500). The child reads the run; it
writes nothing to it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ..atomic import atomic_write_text
from .checker import Verdict

TIMEOUT_S = 30.0
MAX_CODE = 20_000  # characters


def check_code(name: str, code: str, run_dir: str | Path | None = None, timeout: float = TIMEOUT_S) -> Verdict:
    """Exercise ``name`` checked with the function defined in ``code`` on run ``run_dir``'s tensors."""
    if len(code) > MAX_CODE:
        return Verdict(False, f"the code is {len(code):,} characters; at most {MAX_CODE:,} are checked")
    with tempfile.TemporaryDirectory(prefix="tlite-exercise-") as folder:
        path = Path(folder) / "answer.py"
        atomic_write_text(path, code)
        run = ["--run", str(run_dir)] if run_dir else []
        command = [sys.executable, "-m", "transformers_lite", "exercise", "check", name, str(path), *run, "--json"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=folder, check=False)
        except subprocess.TimeoutExpired:
            return Verdict(False, f"the check did not finish within {timeout:g} s (does the function loop forever?)")
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        return Verdict.from_dict(answer)
    except (IndexError, ValueError, KeyError, TypeError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return Verdict(False, f"the check ended without a verdict: {tail[0][:300]}")

"""Derive each step of the posts' equations yourself: the exercises, from a Dense layer to one AdamW step.

tlite exercise list                                   # the path, with what you have done
tlite exercise show dense-backward                    # its statement, and dense_backward.py to edit
tlite exercise check dense-backward dense_backward.py --run outputs/gpt   # on your own run's tensors
tlite exercise hint dense-backward                    # one more hint each time (three at most)
tlite exercise solution dense-backward                # a solution that passes, in plain PyTorch

Your file runs confined in a child process that receives only the step's tensors (see docs/exercises.md);
the verdict says how long your function took (CPU time), apart from loading the run and starting the checker.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

from .. import exercises as ex
from ..atomic import atomic_write_text
from ..errors import ConfigError
from ..exercises.bounded import check_code, default_sandbox, read_answer
from ..exercises.source import source_of
from ..families import load
from .common import command


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="the exercises in order, with what you have done")
    show = actions.add_parser("show", help="an exercise's statement, and its function written to a file to edit")
    show.add_argument("name")
    show.add_argument("--out", help="the file to write (default: NAME.py here, never over an existing one)")
    check = actions.add_parser("check", help="run your function on the tensors of a forward pass and compare")
    check.add_argument("name")
    check.add_argument("file", help="the Python file that defines the exercise's function")
    check.add_argument("--run", help="a run directory: its model's tensors (default: a small built-in model)")
    check.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    hint = actions.add_parser("hint", help="the next hint (each call shows one more)")
    hint.add_argument("name")
    hint.add_argument("--all", action="store_true", help="every hint at once")
    solution = actions.add_parser("solution", help="a solution that passes: plain PyTorch, its shapes commented")
    solution.add_argument("name")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    done = ex.read_progress()
    if args.action == "list":
        width = max(len(e.name) for e in ex.EXERCISES)  # the titles in one column
        for k, e in enumerate(ex.EXERCISES, 1):
            mark = "done" if done.get(e.name, {}).get("passed") else "    "
            print(f"{k:2d}. [{mark}] {e.name:{width}s} {e.title} ({e.part})")
        passed = sum(1 for e in ex.EXERCISES if done.get(e.name, {}).get("passed"))
        print(f"{passed} of {len(ex.EXERCISES)} done; start with: tlite exercise show {ex.EXERCISES[0].name}")
        return 0
    e = ex.exercise(args.name)
    if args.action == "show":
        out = Path(args.out or f"{e.function}.py")
        print(e.stub())
        if out.is_dir():
            raise ConfigError(
                f"--out {out} is a folder; name the file to write, e.g. --out {out / (e.function + '.py')}"
            )
        if out.exists():
            print(f"{out} exists: left as it is (check it with: tlite exercise check {e.name} {out})")
        else:
            atomic_write_text(out, e.stub())
            print(f"wrote {out}: write {e.function}, then: tlite exercise check {e.name} {out}")
        return 0
    if args.action == "hint":
        seen = int(done.get(e.name, {}).get("hints", 0))
        shown = len(e.hints) if args.all else min(seen + 1, len(e.hints))
        for k, text in enumerate(e.hints[:shown], 1):
            print(f"hint {k} of {len(e.hints)}: {text}")
        ex.progress.record(e.name, hints=max(seen, shown))
        return 0
    if args.action == "solution":
        print(e.solution_source())
        return 0
    return _check(e, args)


def cpu_time(seconds: float) -> str:
    """A CPU time as a learner reads it: the process clock counts in ticks of a few milliseconds."""
    return "under 5 ms" if seconds < 0.005 else f"{seconds * 1000:.0f} ms"


def _check(e: ex.Exercise, args: argparse.Namespace) -> int:
    """``check``: the sandbox starts while the run loads; the verdict, then where the time went."""
    code = read_answer(args.file)
    sandbox = default_sandbox()
    starting = threading.Thread(target=sandbox.start, daemon=True)
    starting.start()
    begin = time.perf_counter()
    run = load(args.run) if args.run else None
    source_of(run).given(e)
    loaded = time.perf_counter() - begin
    starting.join()
    verdict = check_code(e, code, run, sandbox)
    if verdict.passed:
        ex.progress.record(e.name, passed=True)
    if args.json:
        print(json.dumps(verdict.to_dict()))
        return 0 if verdict.passed else 1
    print(("PASS " if verdict.passed else "FAIL ") + verdict.message)
    if verdict.printed:
        print("your function printed:\n" + verdict.printed.rstrip())
    spent = "" if verdict.cpu_s is None else f"your function took {cpu_time(verdict.cpu_s)} of CPU; "
    what = f"run {args.run}" if args.run else "the built-in model"
    print(f"({spent}reading {what} and tracing it took {loaded:.1f} s, starting the checker {sandbox.started_s:.1f} s)")
    if not verdict.passed:
        print(f"stuck? tlite exercise hint {e.name}")
    return 0 if verdict.passed else 1

"""``tlite backprop check``: every hand-derived backward pass against autograd."""

from __future__ import annotations

import argparse

from ..backprop.check import TOLERANCE, run_checks


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = sub.add_parser(
        name,
        help="check the hand-derived backward passes against autograd",
        description="Run every hand-written forward/backward (float64) and compare with autograd.",
        epilog="example: tlite backprop check",
    )
    p.add_argument("action", choices=("check",))
    p.add_argument("--seed", type=int, default=0, help="random seed of the test inputs (default: 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rows = run_checks(args.seed)
    width = max(len(r[0]) for r in rows)
    print(f"{'operation':<{width}}  {'max |hand - autograd|':>22}  result")
    for name, err, ok in rows:
        print(f"{name:<{width}}  {err:>22.2e}  {'pass' if ok else 'FAIL'}")
    passed = sum(ok for _, _, ok in rows)
    print(f"{passed}/{len(rows)} operations match autograd (tolerance {TOLERANCE:g}, float64)")
    return 0 if passed == len(rows) else 1

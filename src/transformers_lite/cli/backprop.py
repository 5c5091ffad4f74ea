"""Check the hand-derived backward passes against autograd.

check: run every hand-written forward/backward (float64) and compare with autograd. logreg: train
post 001's logistic regression by gradient descent with the hand-derived gradient.

    tlite backprop check
    tlite backprop logreg --steps 300
"""

from __future__ import annotations

import argparse

from .. import validate
from ..backprop.check import TOLERANCE, run_checks
from ..backprop.logistic import train_logistic_regression
from .common import command

MAX_STEPS = 1_000_000


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument("action", choices=("check", "logreg"))
    p.add_argument("--seed", type=int, default=0, help="random seed of the inputs (default: 0)")
    p.add_argument("--steps", type=int, default=300, help="logreg: gradient-descent steps (default: 300)")
    p.add_argument("--lr", type=float, default=2.0, help="logreg: learning rate (default: 2.0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "logreg":
        validate.integer("--steps", args.steps, 1, high=MAX_STEPS)  # each step keeps its loss and accuracy
        validate.number("--lr", args.lr, 0, low_open=True)
        history = train_logistic_regression(args.steps, args.lr, args.seed)
        for step in sorted({1, *range(0, args.steps + 1, max(1, args.steps // 6))} - {0}):
            print(f"step {step:>5}  loss {history['loss'][step - 1]:.4f}  accuracy {history['accuracy'][step - 1]:.3f}")
        return 0
    rows = run_checks(args.seed)
    width = max(len(r[0]) for r in rows)
    print(f"{'operation':<{width}}  {'max |hand - autograd|':>22}  result")
    for name, err, ok in rows:
        print(f"{name:<{width}}  {err:>22.2e}  {'pass' if ok else 'FAIL'}")
    passed = sum(ok for _, _, ok in rows)
    print(f"{passed}/{len(rows)} operations match autograd (tolerance {TOLERANCE:g}, float64)")
    return 0 if passed == len(rows) else 1

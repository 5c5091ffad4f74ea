"""``python kill_at_step.py STEP RANK tlite-arguments...``: run ``tlite`` with one more callback that
SIGKILLs this process (rank ``RANK``; ``-1`` = every rank) after optimizer step ``STEP``: the
fault-injection hook of the resume and DDP tests (also launched under torchrun)."""

import os
import signal
import sys

from transformers_lite.cli import train
from transformers_lite.cli.main import build_parser
from transformers_lite.training.callbacks import Callback


class KillAt(Callback):
    def __init__(self, step: int, rank: int) -> None:
        self.step, self.rank = step, rank

    def on_step_end(self, trainer, state, loss):  # noqa: ANN001
        if state.step == self.step and self.rank in (-1, trainer.dist.rank):
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    step, rank = int(sys.argv[1]), int(sys.argv[2])
    sys.exit(train.run(build_parser().parse_args(sys.argv[3:]), callbacks=[KillAt(step, rank)]))

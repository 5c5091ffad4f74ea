"""``python kill_at_step.py FAULT tlite-arguments...``: run ``tlite`` with a fault injected, for the
resume, DDP and reliability tests (also launched under torchrun). FAULT is one of:

* ``kill:STEP:RANK``: SIGKILL this process (rank ``RANK``; ``-1`` = every rank) after optimizer step STEP;
* ``kill-mid-write:N``: SIGKILL halfway through writing the N-th checkpoint's optimizer file;
* ``disk-full:N``: the N-th checkpoint's optimizer file fails to write with "No space left on device".
"""

import errno
import os
import signal
import sys

from transformers_lite.cli import train
from transformers_lite.cli.main import build_parser, main
from transformers_lite.runs import files
from transformers_lite.training.callbacks import Callback


class KillAt(Callback):
    def __init__(self, step: int, rank: int) -> None:
        self.step, self.rank = step, rank

    def on_step_end(self, trainer, state, loss):  # noqa: ANN001
        if state.step == self.step and self.rank in (-1, trainer.dist.rank):
            os.kill(os.getpid(), signal.SIGKILL)


def fail_on_write(n: int, kill: bool) -> None:
    """Wrap the optimizer-file writer so that its n-th call dies halfway (kill) or fails (disk full)."""
    real, calls = files.save_file, [0]

    def save_file(tensors, path, metadata=None):  # noqa: ANN001 - safetensors' own signature
        calls[0] += 1
        if calls[0] == n:
            with open(path, "wb") as fh:  # a half-written temporary file, as a crash would leave it
                fh.write(b"\0" * 1000)
                fh.flush()
            if kill:
                os.kill(os.getpid(), signal.SIGKILL)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(tensors, path, metadata=metadata)

    files.save_file = save_file


if __name__ == "__main__":
    kind, *numbers = sys.argv[1].split(":")
    argv = sys.argv[2:]
    if kind == "kill":
        step, rank = map(int, numbers)
        sys.exit(train.run(build_parser().parse_args(argv), callbacks=[KillAt(step, rank)]))
    fail_on_write(int(numbers[0]), kill=kind == "kill-mid-write")
    sys.exit(main(argv))

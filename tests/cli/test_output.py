"""Output that goes nowhere (``cli/output.py``): a write to a closed or failing standard output is
``tlite: error:`` and exit 1; a reader that went away (``| head``) ends the command quietly with 0."""

import contextlib
import errno
import io
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.cli.main import main

# commands that write to standard output without a run: a table, argparse's --help and --version
COMMANDS = [["summary", "post-classifier"], ["summary", "baby-gpt"], ["--version"], ["--help"], ["summary", "--help"]]


class Failing(io.StringIO):
    """Standard output that takes ``room`` characters, then fails as ``how`` says."""

    def __init__(self, how: str, room: int) -> None:
        super().__init__()
        self.how, self.room = how, room

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.room:
            if self.how == "broken pipe":
                raise BrokenPipeError(errno.EPIPE, "Broken pipe")
            if self.how == "closed file":
                raise ValueError("I/O operation on closed file.")
            raise OSError({"full": errno.ENOSPC, "io": errno.EIO, "bad": errno.EBADF}[self.how], "failed")
        return super().write(text)


def run_with_stdout(stream, args):
    """``main(args)`` with ``sys.stdout`` = ``stream``: (exit code, stderr)."""
    err = io.StringIO()
    before = sys.stdout
    sys.stdout = stream
    try:
        with contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as stop:  # argparse's --help and --version
                code = stop.code or 0
    finally:
        sys.stdout = before
    return code, err.getvalue()


@settings(max_examples=40)
@given(
    args=st.sampled_from(COMMANDS),
    how=st.sampled_from(["closed", "broken pipe", "closed file", "full", "io", "bad"]),
    room=st.integers(0, 3000),
)
def test_a_write_that_goes_nowhere_is_an_error_and_a_reader_that_left_is_not(args, how, room):
    everything = io.StringIO()
    assert run_with_stdout(everything, args) == (0, "")
    complete = len(everything.getvalue())
    stream = None if how == "closed" else Failing(how, room)
    code, err = run_with_stdout(stream, args)
    if stream is not None and room >= complete:  # nothing failed: all of it was written
        assert (code, err, stream.getvalue()) == (0, "", everything.getvalue())
    elif how == "broken pipe":  # the reader went away: quiet, as Unix tools are
        assert (code, err) == (0, "")
    else:
        assert code == 1 and err.count("\n") == 1, err
        assert err.startswith("tlite: error:") and "standard output" in err


def tlite_in_shell(redirect: str, *args: object) -> subprocess.CompletedProcess:
    """``tlite ARGS REDIRECT`` through the shell (``>&-``, ``| head -c1``): its status and stderr."""
    command = " ".join(f"'{a}'" for a in [sys.executable, "-m", "transformers_lite", *args])
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command} {redirect}"],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


@pytest.mark.slow
def test_closed_standard_output_is_one_error_line_and_exit_1():
    result = tlite_in_shell(">&-", "summary", "post-classifier")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "tlite: error: standard output is closed (the command was started with >&-); redirect it to a file or /dev/null"
    ]


@pytest.mark.slow
def test_a_reader_that_takes_one_byte_ends_generation_quietly(runs):
    result = tlite_in_shell(
        "| head -c1", "generate", runs / "generator", "--prompt", "Before", "--max-new-tokens", "20000", "--stream"
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "B", "")

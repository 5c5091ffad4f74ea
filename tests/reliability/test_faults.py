"""Fault injection: kill -9 at random moments and in the middle of a checkpoint write, SIGTERM,
SIGINT, a full disk, and two trainings aimed at one folder. Nothing is lost: LATEST always names a
complete checkpoint, resuming gives bitwise the weights of an uninterrupted run, every failure is
one line. (About a minute on 2 cores.)"""

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from transformers_lite.runs import latest_checkpoint

from ..helpers import ONE_THREAD, TINY_GPT

SCRIPT = Path(__file__).resolve().parents[1] / "training" / "kill_at_step.py"
TEXT = "Now is the winter of our discontent\nMade glorious summer by this sun of York;\n" * 60
TINY = [*TINY_GPT, "--warmup-steps", "2", "--seed", "4"]


def tlite(*args, script=None, **kw):
    program = [str(SCRIPT), script] if script else ["-m", "transformers_lite"]
    return subprocess.run(
        [sys.executable, *program, *map(str, args)], capture_output=True, text=True, env=ONE_THREAD, **kw
    )


def weights(run):
    return load_file(Path(run) / "model.safetensors")


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """The reference: 40 steps without interruption."""
    tmp = tmp_path_factory.mktemp("faults")
    (tmp / "t.txt").write_text(TEXT)
    result = tlite(
        "train",
        "generator",
        "--text",
        tmp / "t.txt",
        *TINY,
        "--max-steps",
        "40",
        "--eval-every",
        "5",
        "--out",
        tmp / "straight",
    )
    assert result.returncode == 0, result.stderr
    return tmp


def resume_until_done(run, command=None, tries=5):
    """``--resume``; a run killed before it recorded anything is started again with its own command
    (its folder holds only the released lock, so ``--out`` accepts it)."""
    for _ in range(tries):
        if command and not (run / "hyperparameters.json").is_file():
            result = tlite(*command)
        else:
            result = tlite("train", "generator", "--resume", run)
        if result.returncode == 0:
            return result
    raise AssertionError(result.stderr)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_at_a_random_moment_then_resume_is_exact(straight, seed):
    run = straight / f"killed{seed}"
    command = [
        "train",
        "generator",
        "--text",
        straight / "t.txt",
        *TINY,
        "--max-steps",
        "40",
        "--eval-every",
        "5",
        "--checkpoint-every",
        "1",
        "--out",
        run,
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "transformers_lite", *map(str, command)],
        env=ONE_THREAD,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(random.Random(seed).uniform(1.0, 3.5))  # start-up, metadata, or any step and its checkpoint
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    last = latest_checkpoint(run)
    assert last is None or (last / "state.json").is_file()  # never a half-written checkpoint
    resume_until_done(run, command)
    assert same(weights(straight / "straight"), weights(run))


def test_kill_9_in_the_middle_of_a_checkpoint_write(straight):
    run = straight / "midwrite"
    killed = tlite(
        "train",
        "generator",
        "--text",
        straight / "t.txt",
        *TINY,
        "--max-steps",
        "40",
        "--eval-every",
        "5",
        "--out",
        run,
        script="kill-mid-write:3",
    )
    assert killed.returncode == -signal.SIGKILL
    assert latest_checkpoint(run).name == "step-00000010"  # the 3rd (step 15) died halfway: LATEST untouched
    assert list((run / "checkpoint").glob("step-00000015/.optimizer.safetensors.*.tmp"))  # the debris it left
    resume_until_done(run)
    assert same(weights(straight / "straight"), weights(run))


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_and_ctrl_c_checkpoint_and_exit_non_zero(straight, sig, code):
    run = straight / f"signal{code}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "transformers_lite",
            "train",
            "generator",
            "--text",
            str(straight / "t.txt"),
            *TINY,
            "--max-steps",
            "100000",
            "--eval-every",
            "50",
            "--out",
            str(run),
        ],
        env=ONE_THREAD,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while latest_checkpoint(run) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    step = int(out.split("interrupted at step ")[1].split()[0])
    assert latest_checkpoint(run).name == f"step-{step:08d}" and (run / "model.safetensors").is_file()


def test_a_full_disk_is_one_line_and_keeps_the_previous_checkpoint(straight):
    run = straight / "full"
    result = tlite(
        "train",
        "generator",
        "--text",
        straight / "t.txt",
        *TINY,
        "--max-steps",
        "40",
        "--eval-every",
        "5",
        "--out",
        run,
        script="disk-full:2",
    )
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("tlite: error:") and "No space left on device" in line and "optimizer.safetensors" in line
    assert latest_checkpoint(run).name == "step-00000005" and not list(run.rglob("*.tmp"))
    resume_until_done(run)
    assert same(weights(straight / "straight"), weights(run))


def test_two_trainings_into_one_folder(straight):
    run = straight / "twice"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "transformers_lite",
            "train",
            "generator",
            "--text",
            str(straight / "t.txt"),
            *TINY,
            "--max-steps",
            "100000",
            "--eval-every",
            "50",
            "--out",
            str(run),
        ],
        env=ONE_THREAD,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (run / "hyperparameters.json").is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    for args in (["--text", straight / "t.txt", *TINY, "--max-steps", "5", "--out", run], ["--resume", run]):
        second = tlite("train", "generator", *args)
        assert second.returncode == 1 and len(second.stderr.strip().splitlines()) == 1, second.stderr
        assert "already holds a run" in second.stderr or "is in use by process" in second.stderr
    first.send_signal(signal.SIGINT)
    assert first.wait(timeout=60) == 130
    assert json.loads((run / "hyperparameters.json").read_text())["train"]["max_steps"] == 100000  # not overwritten

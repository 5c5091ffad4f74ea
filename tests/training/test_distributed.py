"""Two-process data-parallel training with gloo on CPU, launched through torchrun."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from ..helpers import ONE_THREAD, TINY_GPT, sets

TEXT = "Now is the winter of our discontent\nMade glorious summer by this sun of York;\n" * 50
TINY = [*TINY_GPT, *sets("dropout=0.0"), "--eval-every", "3", "--warmup-steps", "2", "--seed", "2"]


KILL_SCRIPT = Path(__file__).with_name("kill_at_step.py")


def torchrun(tmp_path, *args, kill=None, timeout=180):
    """torchrun over `tlite train generator ARGS`; ``kill=(step, rank)`` SIGKILLs that rank after that step."""
    program = ["-m", "transformers_lite"] if kill is None else [str(KILL_SCRIPT), f"kill:{kill[0]}:{kill[1]}"]
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        *program,
        "train",
        "generator",
        *map(str, args),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=ONE_THREAD, timeout=timeout)


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(TEXT)
    return path


def test_two_ranks_equal_one_process_with_the_same_global_batch(tmp_path, text):
    result = torchrun(tmp_path, "--text", text, *TINY, "--max-steps", "6", "--out", tmp_path / "ddp")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "weights identical on all 2 ranks: True" in result.stdout
    assert result.stdout.count("step 6 |") == 1  # only rank 0 logs
    single = subprocess.run(
        [
            sys.executable,
            "-m",
            "transformers_lite",
            "train",
            "generator",
            "--text",
            str(text),
            *TINY,
            "--max-steps",
            "6",
            "--accumulate",
            "2",
            "--out",
            str(tmp_path / "single"),
        ],
        capture_output=True,
        text=True,
        env=ONE_THREAD,
    )
    assert single.returncode == 0, single.stderr
    a, b = load_file(tmp_path / "ddp" / "model.safetensors"), load_file(tmp_path / "single" / "model.safetensors")
    for name in a:
        assert torch.allclose(a[name], b[name], atol=1e-5), name
    assert not (tmp_path / "outputs").exists()  # one run directory, written by rank 0 only


def test_resume_under_ddp(tmp_path, text):
    straight = torchrun(tmp_path, "--text", text, *TINY, "--max-steps", "6", "--out", tmp_path / "a")
    assert straight.returncode == 0, straight.stderr[-2000:]
    paused = torchrun(tmp_path, "--text", text, *TINY, "--max-steps", "6", "--stop-at", "3", "--out", tmp_path / "b")
    assert paused.returncode == 0, paused.stderr[-2000:]
    resumed = torchrun(tmp_path, "--resume", tmp_path / "b")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    a, b = load_file(tmp_path / "a" / "model.safetensors"), load_file(tmp_path / "b" / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_killed_rank_ends_the_job_with_an_error(tmp_path, text):
    start = time.monotonic()
    result = torchrun(
        tmp_path,
        "--text",
        text,
        *TINY,
        "--max-steps",
        "50",
        "--dist-timeout",
        "20",
        "--out",
        tmp_path / "k",
        kill=(2, 1),
        timeout=120,
    )
    assert result.returncode != 0
    assert time.monotonic() - start < 90

"""A plain install runs every default command: the wheel, installed without extras into a fresh
virtualenv, trains each model family with its default preset for two steps, evaluates the runs (the classifier's
plots need the [plots] extra and are skipped with a warning), generates, classifies and translates with
them and starts ``tlite serve``.

What is real: the wheel is built from this checkout, and pip installs it with every core dependency it
declares (numpy, safetensors, tqdm, tokenizers, sacrebleu, fastapi, uvicorn and theirs) from the
package index or the machine's local wheels, into a virtualenv that sees no other site-packages.

One shortcut, for time: torch (a 190 MB wheel that takes about a minute to unpack on 2 cores) and its
own requirements come from this interpreter, through a folder of links to exactly those distributions
on the new environment's path; pip sees them as installed. Neither holds any of the extras, and the
test checks that no extra's package can be imported there.

Skipped, with pip's reason, where the core dependencies cannot be installed at all (no network and no
local wheels). Deselect with ``-m "not install"``.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

from transformers_lite.families import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
# the extras' packages (the [hf] extra's huggingface_hub is not among them: tokenizers, a core dependency, requires it)
EXTRAS = ("scipy", "sklearn", "matplotlib", "transformers", "tensorboard", "wandb")
OFFLINE = re.compile(r"NewConnectionError|Failed to establish|Name or service not known|name resolution|unreachable")
pytestmark = pytest.mark.install


def run(*args: object, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command and return its captured output; fail the test showing its stderr if it fails."""
    result = subprocess.run(list(map(str, args)), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{' '.join(map(str, args))} exited {result.returncode}:\n{result.stderr[-3000:]}"
    return result


def build_wheel(out: Path) -> Path:
    """A wheel of this checkout, built from a copy of its packaging files (no build files in the tree)."""
    source = out / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    # the build backend of this interpreter when it is new enough (no download), else pip's isolated build
    try:
        local_backend = int(importlib.metadata.version("setuptools").split(".")[0]) >= 77
    except importlib.metadata.PackageNotFoundError:
        local_backend = False
    isolation = ["--no-build-isolation"] if local_backend else []
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", out / "dist", source, cwd=out)
    (wheel,) = (out / "dist").glob("transformers_lite-*.whl")
    return wheel


def link_torch(venv: Path, links: Path) -> list[str]:
    """Put torch and the distributions it requires (as installed here) on ``venv``'s path through a
    folder of links, one per top-level file or package of each; returns their names."""
    names, todo = [], ["torch"]
    while todo:
        name = todo.pop()
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a requirement for other platforms or Python versions
        if dist.metadata["Name"] in names:
            continue
        names.append(dist.metadata["Name"])
        for top in {Path(f).parts[0] for f in dist.files or ()} - {".."}:  # ".." = scripts outside site-packages
            if not (links / top).exists():
                (links / top).symlink_to(dist.locate_file(top))
        for requirement in dist.requires or ():
            if "extra ==" not in requirement:  # torch's own optional extras are not installed by default
                todo.append(re.match(r"[A-Za-z0-9._-]+", requirement).group())
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    (site / "torch_from_the_test_runner.pth").write_text(f"{links}\n")
    return names


def install(venv: Path, wheel: Path, cwd: Path) -> None:
    """``pip install WHEEL`` into ``venv`` (this interpreter's pip, run for the venv's Python), or skip
    when the dependencies cannot be reached."""
    command = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q"]
    command += ["--only-binary", ":all:", "--no-compile", "--retries", "1", "--timeout", "20", wheel]  # no .pyc: 6 s
    result = subprocess.run(list(map(str, command)), cwd=cwd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0 and OFFLINE.search(result.stderr):
        last = result.stderr.strip().splitlines()[-1]
        pytest.skip(f"cannot install the core dependencies here (no network, no local wheels): pip says {last!r}")
    assert result.returncode == 0, f"pip install {wheel.name} failed:\n{result.stderr[-3000:]}"


def write_data(data: Path) -> dict[str, Path]:
    """Tiny inputs for each family: reviews (JSONL), a text, German/English sentence pairs."""
    data.mkdir()
    words = {1: "awful", 2: "poor", 3: "okay", 4: "good", 5: "great"}
    things = ("red box", "blue kettle", "green lamp", "small chair", "old phone", "new cable", "cheap pen", "big bag")
    reviews = [{"review_body": f"The {t} was {w}, really {w}.", "stars": s} for t in things for s, w in words.items()]
    german = [
        "ein hund läuft",
        "eine frau liest ein buch",
        "zwei kinder spielen",
        "ein mann kocht",
        "die katze schläft",
    ]
    english = ["a dog runs", "a woman reads a book", "two children play", "a man cooks", "the cat sleeps"]
    texts = {
        "reviews.jsonl": "".join(json.dumps(r) + "\n" for r in reviews),
        "text.txt": "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n" * 120,
        "train.de": "\n".join(german * 8) + "\n",
        "train.en": "\n".join(english * 8) + "\n",
        "val.de": "\n".join(german) + "\n",
        "val.en": "\n".join(english) + "\n",
    }
    for name, text in texts.items():
        (data / name).write_text(text, encoding="utf-8")
    return {name: data / name for name in texts}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(tlite: str, runs: Path, env: dict[str, str]) -> tuple[str, dict]:
    """Start ``tlite serve RUNS`` on a free local port, read its page and ``/api/runs``, stop it."""
    port = free_port()
    server = subprocess.Popen(
        [tlite, "serve", str(runs), "--port", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, f"tlite serve exited {server.returncode}: {server.stderr.read().decode()}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=5) as response:
                    listed = json.loads(response.read())
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    return response.read().decode(), listed
            except OSError:
                assert time.monotonic() < deadline, "tlite serve did not answer within 60 s"
                time.sleep(0.25)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_plain_install_runs_every_default_command(tmp_path):
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)  # pip is run from here, for the venv
    (tmp_path / "links").mkdir()
    linked = link_torch(venv, tmp_path / "links")
    install(venv, wheel, tmp_path)

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}  # no PYTHONPATH=src
    env.update(PYTHONNOUSERSITE="1", OMP_NUM_THREADS="1")
    python, tlite = str(venv / "bin" / "python"), str(venv / "bin" / "tlite")
    check = f"""
import importlib.util, json, transformers_lite
from transformers_lite.server.app import create_app
print(json.dumps({{"package": transformers_lite.__file__,
                  "extras": [m for m in {EXTRAS!r} if importlib.util.find_spec(m) is not None]}}))
"""
    found = json.loads(run(python, "-c", check, cwd=tmp_path, env=env).stdout)
    assert Path(found["package"]).is_relative_to(venv), f"imported {found['package']}, not the installed wheel"
    assert found["extras"] == [], f"extras leaked into the plain install (via {linked})"
    assert "--port" in run(tlite, "serve", "--help", cwd=tmp_path, env=env).stdout

    files, runs = write_data(tmp_path / "data"), tmp_path / "runs"
    steps = ["--max-steps", "2"]
    commands = {
        "classifier": ["--train", files["reviews.jsonl"], "--val", files["reviews.jsonl"], "--labels", "5"],
        "generator": ["--text", files["text.txt"]],
        "seq2seq": ["--train-src", files["train.de"], "--train-tgt", files["train.en"]]
        + ["--val-src", files["val.de"], "--val-tgt", files["val.en"]],
        "mlm": ["--reviews", files["reviews.jsonl"]],
    }
    for family, args in commands.items():
        result = run(tlite, "train", family, *args, *steps, "--out", runs / family, cwd=tmp_path, env=env)
        assert "UserWarning" not in result.stderr, result.stderr  # e.g. torch's notices about sparse tensors
        recorded = json.loads((runs / family / "hyperparameters.json").read_text())
        assert recorded["total_steps"] == 2 and recorded["preset"] == FAMILIES[family].default_preset, recorded
    assert json.loads((runs / "classifier" / "hyperparameters.json").read_text())["data"]["embedding_init"] == "ppmi"
    assert json.loads((runs / "mlm" / "hyperparameters.json").read_text())["data"]["embedding_init"] == "ppmi"
    assert json.loads((runs / "seq2seq" / "src_tokenizer.json").read_text())["kind"] == "bpe"
    assert "val_bleu" in json.loads((runs / "seq2seq" / "history.json").read_text())[-1]
    scored = run(
        tlite, "evaluate", runs / "classifier", "--data", files["reviews.jsonl"], "--json", cwd=tmp_path, env=env
    )
    assert "accuracy" in json.loads(scored.stdout) and "transformers-lite[plots]" in scored.stderr  # plots: an extra
    # and what a user does next with each run: generate, classify, translate, evaluate the others
    sample = run(
        tlite, "generate", runs / "generator", "--prompt", "To be", "--max-new-tokens", "20", cwd=tmp_path, env=env
    )
    assert sample.stdout.startswith("To be") and len(sample.stdout) > len("To be")
    classified = json.loads(
        run(tlite, "classify", runs / "classifier", "great box", "--json", cwd=tmp_path, env=env).stdout
    )
    [result] = classified["results"]
    assert abs(sum(result["probabilities"].values()) - 1) <= 5 * 0.5e-4, classified  # five values, each to 4 places
    translated = json.loads(
        run(tlite, "translate", runs / "seq2seq", "ein hund läuft", "--json", cwd=tmp_path, env=env).stdout
    )
    [pair] = translated["translations"]
    assert pair["source"] == "ein hund läuft" and isinstance(pair["translation"], str), translated
    for family, score in (("generator", "perplexity"), ("seq2seq", "bleu")):
        scores = json.loads(run(tlite, "evaluate", runs / family, "--json", cwd=tmp_path, env=env).stdout)
        assert scores["task"] == family and math.isfinite(scores[score]), scores

    page, listed = serve(tlite, runs, env)
    assert "<html" in page.lower()  # the static page is in the wheel
    assert {r["name"]: r["family"] for r in listed["runs"]} == {family: family for family in commands}, listed

"""An exception never reaches the user unmapped: every file the project writes goes through the atomic
writer, an OS error is one line naming the file in the CLI and a 4xx naming it in the inspector, and a
run whose outputs are huge is evaluated with its perplexity said to be too large to print."""

import ast
import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file, save_file

import transformers_lite
from transformers_lite.cli import evaluate as evaluate_cmd
from transformers_lite.cli.main import main

SRC = Path(transformers_lite.__file__).parent
KINDS = [
    (FileNotFoundError, errno.ENOENT, 404),
    (PermissionError, errno.EACCES, 403),
    (IsADirectoryError, errno.EISDIR, 409),
    (OSError, errno.ENOSPC, 409),
    (OSError, errno.EIO, 409),
    (OSError, errno.EROFS, 409),
]
NAMES = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="/\x00"), min_size=1, max_size=20)
# written in place on purpose: the run's lock file, which ``flock`` holds open (``training/rundir.py``)
IN_PLACE = {"training/rundir.py"}
WRITES = {"write_text", "write_bytes", "savefig", "save", "save_file", "save_model", "to_csv", "to_json"}


def test_every_write_goes_through_the_atomic_writer():
    """No module but ``atomic.py`` opens a file for writing or calls a library's writer on a path of its
    own: a writer's target is the temporary file ``atomic_write`` gives (``tmp``), or another atomic call."""
    bypass = []
    for path in SRC.rglob("*.py"):
        if path.name == "atomic.py" or str(path.relative_to(SRC)) in IN_PLACE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            args = [a for a in node.args if isinstance(a, ast.Name)]
            if name == "open" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                writes = any(c in str(node.args[1].value) for c in "wax+")
            else:
                writes = name in WRITES and name != "to_json" or (name == "to_json" and node.args)
            through_atomic = any(a.id == "tmp" for a in args) or name in ("save", "to_json")
            if writes and not through_atomic:
                bypass.append(f"{path.relative_to(SRC)}:{node.lineno} {name}")
    assert bypass == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), name=NAMES)
def test_an_os_error_is_one_line_naming_the_file(capsys, monkeypatch, kind, name):
    cls, code, _ = kind
    path = f"/data/{name}/file.txt"

    def fails(*_a, **_k):
        raise cls(code, os.strerror(code), path)

    monkeypatch.setattr(evaluate_cmd, "load_run", fails)
    assert main(["evaluate", "somewhere"]) == 1
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tlite: error: ") and "internal error" not in err
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in path)
    assert shown in lines[0]  # named, on one line, a line break in the name escaped
    assert os.strerror(code) in lines[0] and "Errno" not in lines[0]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), name=NAMES)
def test_an_os_error_in_the_inspector_is_a_4xx_naming_the_file_inside_the_folder(runs, tmp_path, kind, name):
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    cls, code, status = kind
    inside = tmp_path / "runs" / name / "metrics.csv"

    def fails(self):
        raise cls(code, os.strerror(code), str(inside))

    if not (tmp_path / "runs").exists():
        shutil.copytree(runs / "generator", tmp_path / "runs" / "gen")
    client = TestClient(create_app(RunRegistry(tmp_path / "runs"), allowed_hosts=["testserver"]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RunRegistry, "refresh", fails)  # the folder's listing fails as the request reads it
        answer = client.get("/api/runs")
    assert answer.status_code == status
    message = answer.json()["error"]
    assert os.strerror(code) in message and str(tmp_path) not in message  # the folder's own, relative


def test_a_run_whose_outputs_are_huge_is_evaluated_with_its_perplexity_in_words(runs, cli, tmp_path):
    run = tmp_path / "huge"
    shutil.copytree(runs / "generator", run)
    tensors = load_file(run / "model.safetensors")
    tensors = {k: v * 1e4 if k.startswith("head") else v for k, v in tensors.items()}  # the output layer
    save_file(tensors, run / "model.safetensors")
    line = cli("evaluate", run, "--trust-edited")
    assert line.code == 0 and "perplexity too large to print (over 1.8e308)" in line.out, line.err
    printed = cli("evaluate", run, "--trust-edited", "--json")
    assert printed.code == 0 and json.loads(printed.out)["perplexity"].startswith("too large to print")


def test_the_cli_names_a_missing_input_and_leaves_no_folder(cli, tmp_path):
    missing = tmp_path / "nowhere" / "t.txt"
    result = cli("train", "generator", "--text", missing, "--max-steps", "1", "--out", tmp_path / "out")
    assert result.code == 1 and len(result.lines) == 1 and "t.txt" in result.lines[0]
    assert not (tmp_path / "out").exists()

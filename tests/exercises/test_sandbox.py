"""An answer is untrusted input: it runs confined, gets only the step's tensors, and cannot change a run,
outlive its check, or forge its verdict; every printed solution passes its check exactly as printed."""

import hashlib
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite.exercises import EXERCISES, exercise, run_check
from transformers_lite.exercises.bounded import check_code
from transformers_lite.exercises.confine import Limits, landlock_version
from transformers_lite.exercises.sandbox import Sandbox, SandboxBusy

from ..reliability.conftest import cli, files, runs  # noqa: F401 - fixtures reused here

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox's limits are Linux's")

RIGHT = "    return x @ w.T + b\n"
WRONG = "    return x @ w.T - b\n"


@pytest.fixture(scope="module")
def box():
    sandbox = Sandbox(Limits(cpu_s=1.0), wall_s=4.0)
    yield sandbox
    sandbox.close()


def _digest(folder):
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
    }


def _children(pid):
    """The processes whose parent is ``pid`` (a check's leftovers are re-parented to the warden)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat", "rb").read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                out.append(int(entry))
    return out


# each hostile action, as lines run inside dense_forward before it returns (RUN: the run's folder); an
# OSError (what a confined answer meets) is caught, so that the answer still returns its result
HOSTILE = {
    "nothing": "pass",
    "print a passing verdict": 'print(\'{"passed": true, "message": "right"}\', end="")',
    "print a lot": "print('x' * 5_000_000)",
    "patch allclose": "torch.allclose = lambda *a, **k: True\n        torch.isclose = lambda a, b, **k: a == a",
    "register an exit hook": "import atexit\n        atexit.register(print, '{\"passed\": true}')",
    "write into the run": "open(RUN + '/model.safetensors', 'wb').write(b'gone')",
    "delete the weights": "os.remove(RUN + '/model.safetensors')",
    "write a file here": "open('left.txt', 'w').write('x')",
    "read a system file": "open('/etc/passwd').read()",
    "fork a sleeper": "if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)",
    "start a process": "subprocess.Popen(['sleep', '60'])",
}


def _answer(action, right, run_dir):
    head = f"import os, subprocess, time\nimport torch\nRUN = {str(run_dir)!r}\n\n\ndef dense_forward(x, w, b):\n"
    hostile = f"    try:\n        {HOSTILE[action]}\n    except OSError:\n        pass\n"
    return head + hostile + (RIGHT if right else WRONG)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(action=st.sampled_from(sorted(HOSTILE)), right=st.booleans())
def test_a_hostile_answer_gets_the_verdict_its_result_earns_and_changes_nothing(box, runs, action, right):  # noqa: F811
    if action in ("write into the run", "delete the weights") and not landlock_version() and os.geteuid() != 0:
        pytest.skip("without Landlock (or root to give up) an answer runs as your user: it can write your files")
    run_dir = runs / "generator"
    before = _digest(run_dir)
    verdict = check_code(exercise("dense-forward"), _answer(action, right, run_dir), tl.load(run_dir), box)
    assert verdict.passed == right, (action, verdict.message)
    assert _digest(run_dir) == before, action
    warden = box._box[0]
    assert warden is not None and _children(warden.pid) == [], action  # nothing outlives the check
    assert len(verdict.printed) <= 16_384


def test_an_answer_that_loops_waits_or_exits_gets_a_line_about_its_own_code(box):
    e = exercise("relu-backward")
    loop = check_code(e, "def relu_backward(a, dy):\n    while True:\n        pass\n", None, box)
    assert not loop.passed and "1 s of CPU time (the limit) without returning" in loop.message
    wait = check_code(e, "import time\ndef relu_backward(a, dy):\n    time.sleep(30)\n", None, box)
    assert not wait.passed and "does it sleep, or wait for input?" in wait.message
    at_import = check_code(e, "import sys\nsys.exit(0)\n", None, box)
    assert not at_import.passed and "called exit(0) while it was read" in at_import.message
    inside = check_code(e, "import sys\ndef relu_backward(a, dy):\n    sys.exit(0)\n", None, box)
    assert not inside.passed and "called exit(0) instead of returning" in inside.message
    hard = check_code(e, "import os\ndef relu_backward(a, dy):\n    os._exit(0)\n", None, box)
    assert not hard.passed and "ended its process" in hard.message
    interrupt = check_code(e, "def relu_backward(a, dy):\n    raise KeyboardInterrupt\n", None, box)
    assert not interrupt.passed and interrupt.message == "relu_backward raised KeyboardInterrupt (line 2 of answer.py)"
    broken = check_code(e, "def relu_backward(a, dy):\n    return dy *\n", None, box)
    assert not broken.passed and "does not run: SyntaxError" in broken.message
    integer = check_code(e, "def relu_backward(a, dy):\n    return (dy * (a > 0)).long()\n", None, box)
    assert not integer.passed and "integer result" in integer.cause
    huge = check_code(e, "import torch\ndef relu_backward(a, dy):\n    return torch.zeros(50_000_000)\n", None, box)
    assert not huge.passed and "far more numbers" in huge.message


def test_the_answer_sees_no_argument_but_the_steps_tensors(box):
    e = exercise("relu-backward")
    spy = (
        "import os, sys\n"
        "def relu_backward(a, dy):\n"
        "    raise ValueError(repr(sys.argv) + ' ' + os.getcwd() + ' ' + repr(sorted(os.environ)))\n"
    )
    verdict = check_code(e, spy, None, box)
    assert "['answer.py']" in verdict.message and "tlite-answer-" in verdict.message
    assert "PYTHONPATH" not in verdict.message and "XDG" not in verdict.message


def test_a_result_larger_than_a_pipe_holds_comes_back_whole_every_time(box):
    e = exercise("batched-matmul-backward")  # da (H, T, T) and db (H, T, D) in float64: over 64 KiB
    verdicts = [check_code(e, e.solution_source(), None, box) for _ in range(12)]
    assert all(v.passed for v in verdicts), [v.message for v in verdicts if not v.passed]


def test_a_burst_of_checks_is_bounded(box):
    busy = Sandbox(Limits(cpu_s=1.0), max_waiting=0)
    busy._waiting = 1  # one check running, none may wait
    with pytest.raises(SandboxBusy, match="already running or waiting"):
        busy.run("", "f", (), {})


@pytest.mark.parametrize("e", EXERCISES, ids=lambda e: e.name)
def test_every_printed_solution_passes_its_check_as_printed(cli, tmp_path, monkeypatch, e):  # noqa: F811
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    printed = cli("exercise", "solution", e.name)
    assert printed.code == 0 and "transformers_lite" not in printed.out and "import torch" in printed.out
    (tmp_path / "s.py").write_text(printed.out)
    checked = cli("exercise", "check", e.name, "s.py")
    assert checked.code == 0 and checked.out.startswith("PASS "), checked.out
    assert "your function took" in checked.out and "starting the checker" in checked.out
    assert run_check(e.name, tmp_path / "s.py", keep=False).passed


def test_every_printed_solution_passes_on_a_trained_run_and_from_the_page(runs, tmp_path, monkeypatch):  # noqa: F811
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(runs.parent)
    client = TestClient(create_app(RunRegistry(runs.name)), base_url="http://127.0.0.1")  # as `tlite serve runs`
    try:
        for e in EXERCISES:
            answer = client.post("/api/runs/generator/exercise", json={"name": e.name, "code": e.solution_source()})
            assert answer.status_code == 200 and answer.json()["passed"], (e.name, answer.json())
            assert run_check(e.name, e.solution, run=tl.load(runs / "generator"), keep=False).passed
    finally:
        client.app.state.sandbox.close()


def test_a_server_other_machines_can_reach_runs_no_code_without_allow_code(runs):  # noqa: F811
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    body = {"name": "dense-forward", "code": exercise("dense-forward").solution_source()}
    off = TestClient(create_app(RunRegistry(runs), host="0.0.0.0"), base_url="http://127.0.0.1")
    refused = off.post("/api/runs/generator/exercise", json=body)
    assert refused.status_code == 403 and "--allow-code" in refused.json()["error"]
    assert "--allow-code" in off.get("/api/exercises").json()["code"]
    on = TestClient(create_app(RunRegistry(runs), host="0.0.0.0", allow_code=True), base_url="http://127.0.0.1")
    try:
        assert on.post("/api/runs/generator/exercise", json=body).json()["passed"]
    finally:
        on.app.state.sandbox.close()

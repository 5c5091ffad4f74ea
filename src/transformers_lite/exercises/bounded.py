"""Checking an answer sent as code (a file, the inspector's "try it yourself"): the learner's function
runs confined in the sandbox (``sandbox``, ``warden``, ``confine``), and only its returned tensors come
back; the verdict is formed here, by this process's own checker, on the inputs and expected results
of the run's forward pass (``source.source_of``: traced once per run). A verdict is about the learner's
function only: loading the run, tracing it and starting the sandbox are not counted against it, and a
check stopped for time says what it measured (CPU time used, or waiting) rather than blaming the code
for a busy machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .checker import Verdict, judge
from .exercise import Exercise
from .sandbox import MAX_RESULT_BYTES, Answer, Sandbox
from .source import source_of

MAX_CODE = 20_000  # characters


def read_answer(path: str | Path) -> str:
    """The code of the learner's file ``path`` (a ``ConfigError`` says what is wrong with it)."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path} is a folder; give the Python file that defines the function")
    if not path.is_file():
        raise ConfigError(f"{path}: no such file (write one with: tlite exercise show NAME --out {path})")
    try:
        code = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; save it as a Python file in UTF-8") from None
    if len(code) > MAX_CODE:
        raise ConfigError(f"{path} holds {len(code):,} characters; at most {MAX_CODE:,} are checked")
    return code


def check_code(exercise: Exercise, code: str, run: Any = None, sandbox: Sandbox | None = None) -> Verdict:  # noqa: ANN401
    """``exercise`` checked with the function ``code`` defines, run in ``sandbox``, on the tensors of
    ``run``'s forward pass (a loaded run; ``None``: the built-in model)."""
    if len(code) > MAX_CODE:
        return Verdict(False, f"the code is {len(code):,} characters; at most {MAX_CODE:,} are checked")
    given, expected = source_of(run).given(exercise)
    budget = sum(int(t.numel()) * 8 for t in expected if hasattr(t, "numel"))
    box = sandbox if sandbox is not None else default_sandbox()
    answer = box.run(code, exercise.function, exercise.arguments, given, min(MAX_RESULT_BYTES, 8 * budget + (1 << 20)))
    return verdict_of(exercise, answer, given, expected, box)


def verdict_of(
    exercise: Exercise, answer: Answer, given: dict[str, Any], expected: tuple[Any, ...], box: Sandbox
) -> Verdict:
    """The verdict on one confined run of the learner's function (see the module docstring)."""
    printed, cpu = answer.output, answer.call_cpu_s
    if answer.status == "returned":
        verdict = judge(exercise, answer.outputs, given, expected)
        message = verdict.message
    else:
        message = _why(exercise, answer, box)
        verdict = Verdict(False, message)
    if answer.left:
        message += f" (it started {answer.left} other process(es); each was ended with the check)"
    return Verdict(verdict.passed, message, verdict.cause, verdict.cells, cpu, printed)


def _why(exercise: Exercise, answer: Answer, box: Sandbox) -> str:
    """The line a learner reads when their function gave no result to compare."""
    name, status, text = exercise.function, answer.status, answer.message
    used = f"{answer.cpu_s:.1f} s" if answer.cpu_s is not None else "an unknown time"
    if status == "not_implemented":
        return f"{name} is not implemented yet (it raises NotImplementedError)"
    if status == "raised":
        return f"{name} raised {text}"
    if status == "no_function":
        return f"the code defines no function {name}(...)"
    if status == "load_failed":
        return f"the code does not run: {text}"
    if status == "exit_at_load":
        return f"the code called {text} while it was read; it should only define {name}(...)"
    if status == "exit":
        return f"{name} called {text} instead of returning its result"
    if status == "too_large":
        return f"{name} returned far more numbers than {', '.join(exercise.returns)} hold"
    if status == "unsendable":
        return f"{name} returned a tensor that cannot be compared ({text}); return real (float) tensors"
    if status == "garbled":
        return f"{name}'s result could not be read back (did the code write into the check's channel?)"
    if status == "timed_out":
        if answer.cpu_s is not None and answer.cpu_s < 0.5 * answer.wall_s:
            return (
                f"{name} waited {answer.wall_s:.0f} s using only {used} of CPU time, and was stopped: "
                "does it sleep, or wait for input?"
            )
        return (
            f"the check was stopped after {answer.wall_s:.0f} s of wall time, when {name} had used {used} of CPU "
            f"(the limit is {box.limits.cpu_s:g} s): the machine is busy; check again"
        )
    if answer.signal == "SIGXCPU":
        return f"{name} used {box.limits.cpu_s:g} s of CPU time (the limit) without returning: does it loop forever?"
    if answer.signal is not None:
        return f"the process running {name} was ended by {answer.signal} (out of memory? the check allows " + (
            f"{box.limits.memory_bytes >> 20} MiB)"
        )
    return f"{name} ended its process instead of returning its result"


_DEFAULT: list[Sandbox] = []


def default_sandbox() -> Sandbox:
    """The sandbox this process checks files with (started on first use, ended when the process ends)."""
    if not _DEFAULT:
        _DEFAULT.append(Sandbox())
    return _DEFAULT[0]

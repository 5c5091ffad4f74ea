"""``Sandbox``: a warm warden process, and one learner's answer run in it, confined (``warden``).

The sandbox starts the warden once (a Python process that imports torch, about two seconds) and keeps
it; each answer then costs a fork of it. ``run`` sends the answer's code and the step's tensors (only
those: never a run's path or files), waits for the warden's report and hands back an ``Answer``: what
the function returned (tensors read from safetensors bytes, which cannot carry code), how it ended, its
CPU time and what it printed. Checks are taken one at a time; ``max_waiting`` more may wait their turn
and any further one is refused at once (``SandboxBusy``), so a burst of checks cannot pile up processes.
A warden that died (killed, out of memory) is started again for the next check.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safetensors.torch import load, save
from torch import Tensor

from .confine import Limits
from .warden import read_frame, write_frame

WARDEN = Path(__file__).with_name("warden.py")
WALL_S = 120.0  # an answer that waits (sleep, input) rather than computes is stopped after this long
MAX_RESULT_BYTES = 256 << 20


class SandboxBusy(RuntimeError):
    """Too many checks are already waiting for the sandbox."""


@dataclass
class Answer:
    """What one run of an answer gave: ``status`` is the child's (returned, raised, not_implemented,
    no_function, load_failed, exit_at_load, exit, unsendable) or the warden's (timed_out, too_large,
    ended: the child ended without a result)."""

    status: str
    outputs: tuple[Any, ...] = ()  # what the function returned: tensors, or the type names of other values
    message: str = ""  # an error's type and text, the exit call, ...
    call_cpu_s: float | None = None  # the function's own call, measured in the child
    cpu_s: float | None = None  # the whole child's CPU time, from the kernel
    wall_s: float = 0.0
    signal: str | None = None
    output: str = ""  # what the answer printed (capped)
    confinement: list[str] = field(default_factory=list)
    left: int = 0  # processes the answer left, ended by the warden


class Sandbox:
    """One warden, started on first use (or by ``start``) and kept warm; see the module docstring."""

    def __init__(self, limits: Limits | None = None, max_waiting: int = 4, wall_s: float = WALL_S) -> None:
        self.limits = limits or Limits()
        self.max_waiting = max_waiting
        self.wall_s = wall_s
        self.landlock = 0
        self._box: list[subprocess.Popen[bytes] | None] = [None]  # the warden (a list: the finalizer's too)
        self._lock = threading.Lock()
        self._waiting = 0
        self._count = threading.Lock()
        self.started_s = 0.0  # how long the last start took
        weakref.finalize(self, _stop, self._box)

    def start(self) -> None:
        """Start the warden now (at most once), so the first check finds it warm."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> subprocess.Popen[bytes]:
        running = self._box[0]
        if running is not None and running.poll() is None:
            return running
        begin = time.perf_counter()
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                [sys.executable, "-I", str(WARDEN)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,
                close_fds=True,
            )
            assert process.stdout is not None
            try:
                hello = json.loads(read_frame(process.stdout, cap=1 << 16))
            except (EOFError, ValueError):
                process.kill()
                process.wait()
                errors.seek(0)
                last = errors.read().decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
                raise RuntimeError(f"the exercise checker did not start: {last[0][:300]}") from None
        self.landlock = int(hello.get("landlock", 0))
        self._box[0] = process
        self.started_s = time.perf_counter() - begin
        return process

    def run(
        self,
        code: str,
        function: str,
        arguments: tuple[str, ...],
        given: dict[str, Any],
        max_result_bytes: int = MAX_RESULT_BYTES,
    ) -> Answer:
        """``function`` of ``code`` called on ``given``'s values of ``arguments`` in a confined child;
        a result larger than ``max_result_bytes`` is not sent back (``too_large``)."""
        with self._count:
            if self._waiting >= self.max_waiting + 1:
                raise SandboxBusy(f"{self._waiting} checks are already running or waiting; try again in a moment")
            self._waiting += 1
        try:
            with self._lock:
                return self._run(code, function, arguments, given, max_result_bytes)
        finally:
            with self._count:
                self._waiting -= 1

    def _run(
        self, code: str, function: str, arguments: tuple[str, ...], given: dict[str, Any], max_result_bytes: int
    ) -> Answer:
        tensors = {k: v.contiguous() for k, v in given.items() if k in arguments and isinstance(v, Tensor)}
        numbers = {k: v for k, v in given.items() if k in arguments and not isinstance(v, Tensor)}
        request = {
            "code": code,
            "function": function,
            "arguments": list(arguments),
            "numbers": numbers,
            "cpu_s": self.limits.cpu_s,
            "memory_bytes": self.limits.memory_bytes,
            "max_result_bytes": max_result_bytes,
            "wall_s": self.wall_s,
        }
        payload = save(tensors) if tensors else b""
        for attempt in (0, 1):
            process = self._ensure()
            assert process.stdin is not None and process.stdout is not None
            try:
                write_frame(process.stdin, json.dumps(request).encode())
                write_frame(process.stdin, payload)
                report = json.loads(read_frame(process.stdout, cap=1 << 24))
                data = read_frame(process.stdout, cap=max_result_bytes + (1 << 20))
                return _answer(report, data)
            except (EOFError, BrokenPipeError, OSError, ValueError):
                _stop(self._box)  # the warden died mid-check: started again for the next one
                if attempt:
                    return Answer("ended", message="the checker's worker stopped during the check")
        raise AssertionError("unreachable")

    def close(self) -> None:
        """End the warden (a later check starts a new one)."""
        with self._lock:
            _stop(self._box)


def _stop(box: list[subprocess.Popen[bytes] | None]) -> None:
    """End the warden held in ``box`` (if any) and empty the box."""
    process, box[0] = box[0], None
    if process is not None:
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        process.kill()
        process.wait()


def _answer(report: dict[str, Any], data: bytes) -> Answer:  # noqa: ANN401
    """The warden's report and the returned tensors as an ``Answer``."""
    child = report.get("answer") or {}
    common: dict[str, Any] = {
        "cpu_s": report.get("cpu_s"),
        "wall_s": float(report.get("wall_s", 0.0)),
        "signal": report.get("signal"),
        "output": str(report.get("output", "")),
        "confinement": list(child.get("confinement", [])),
        "left": int(report.get("left", 0)),
    }
    if report.get("timed_out"):
        return Answer("timed_out", **common)
    if report.get("too_large"):
        return Answer("too_large", **common)
    status = str(child.get("status", "ended"))
    if status != "returned":
        return Answer(status, message=str(child.get("message", "")), **common)
    try:
        tensors = load(data) if data else {}
    except Exception:  # noqa: BLE001 - bytes the answer wrote into its channel: not tensors
        return Answer("garbled", **common)
    kinds = child.get("kinds", [])
    outputs = tuple(tensors.get(str(k), kind) for k, kind in enumerate(kinds))
    if any(kind == "tensor" and not isinstance(out, Tensor) for kind, out in zip(kinds, outputs)):
        return Answer("garbled", **common)
    return Answer("returned", outputs, call_cpu_s=child.get("cpu_s"), **common)

"""The warden: a process that has PyTorch loaded and runs each learner's answer in a fresh, confined child.

Started by ``exercises.sandbox.Sandbox`` as ``python -I warden.py`` (standard library, torch and
safetensors only: nothing of the run, nothing of the library). It imports torch once and then waits for
checks, so a check costs a ``fork``, not an interpreter and a torch import. For each check it reads a
request from its channel — the answer's code, the function's name, its arguments (the step's tensors,
as safetensors bytes, and its numbers), the limits — and forks a child that confines itself
(``confine``), runs the code, calls the function, and writes back only what the function returned: a
small header (returned, raised, ...) and the returned tensors as safetensors bytes. The warden reads
that, and what the answer printed (both capped), ends the child's whole process group and every
process the check left (the warden adopts them: it is a child subreaper), and answers with its own
report: the child's CPU time (from the kernel), how it ended, what it printed. No verdict is formed
here or in the child: the parent compares the returned tensors itself, so nothing an answer prints,
patches or writes can pass it.

Frames on every channel: an 8-byte big-endian length, then that many bytes.
"""

from __future__ import annotations

import codecs
import contextlib
import ctypes
import encodings.idna  # noqa: F401 - loaded here, so that an answer's sockets need not read it
import importlib.util
import json
import linecache
import os
import selectors
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import IO, Any

import torch
import torch.nn.functional as F
from safetensors.torch import load, save

OUTPUT_CAP = 16_384  # characters of what an answer prints that come back
_PR_SET_CHILD_SUBREAPER = 36


def write_frame(stream: IO[bytes] | int, data: bytes) -> None:
    payload = struct.pack(">Q", len(data)) + data
    if isinstance(stream, int):
        view = memoryview(payload)
        while view:
            view = view[os.write(stream, view) :]
    else:
        stream.write(payload)
        stream.flush()


def read_frame(stream: IO[bytes], cap: int = 1 << 40) -> bytes:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the channel closed")
    size = struct.unpack(">Q", head)[0]
    if size > cap:
        raise ValueError(f"a frame of {size:,} bytes (at most {cap:,})")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the channel closed mid-frame")
    return data


def _confine_module() -> Any:  # noqa: ANN401 - the sibling module confine.py, loaded by its path
    spec = importlib.util.spec_from_file_location("tlite_confine", Path(__file__).with_name("confine.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tlite_confine"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the child: runs the answer
def _located(err: BaseException) -> str:
    """`` (line N of answer.py)`` for the deepest frame of the answer's own code, or ``""``."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == "answer.py"]
    return f" (line {frames[-1].lineno} of answer.py)" if frames else ""


def _error_text(err: BaseException) -> str:
    """``KeyError: 'x' (line 3 of answer.py)``: the error's type, its text when it has one, where."""
    try:
        text = str(err)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails
        text = ""
    return (f"{type(err).__name__}: {text}" if text else type(err).__name__)[:2000] + _located(err)


def _run_answer(request: dict[str, Any], tensors: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The answer's code run and its function called: (header, tensors returned)."""
    code, name = request["code"], request["function"]
    linecache.cache["answer.py"] = (len(code), None, code.splitlines(True), "answer.py")
    namespace: dict[str, Any] = {"__name__": "answer", "__file__": "answer.py", "__builtins__": __builtins__}
    try:
        exec(compile(code, "answer.py", "exec"), namespace)  # noqa: S102 - the confined answer
    except SystemExit as err:
        return {"status": "exit_at_load", "message": f"exit({err.code!r})"}, {}
    except BaseException as err:  # noqa: BLE001 - whatever the answer raises is its verdict
        return {"status": "load_failed", "message": _error_text(err)}, {}
    function = namespace.get(name)
    if not callable(function):
        return {"status": "no_function"}, {}
    arguments = [tensors[a] if a in tensors else request["numbers"][a] for a in request["arguments"]]
    start = time.process_time()
    try:
        result = function(*arguments)
    except NotImplementedError:
        return {"status": "not_implemented"}, {}
    except SystemExit as err:
        return {"status": "exit", "message": f"exit({err.code!r})"}, {}
    except BaseException as err:  # noqa: BLE001 - KeyboardInterrupt too: the answer raised it
        return {"status": "raised", "message": _error_text(err)}, {}
    cpu = time.process_time() - start
    values = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    size = sum(int(v.nelement()) * v.element_size() for v in values if isinstance(v, torch.Tensor))
    if size > int(request["max_result_bytes"]):
        return {"status": "too_large", "message": f"{size:,} bytes"}, {}
    kinds: list[str] = []
    out: dict[str, Any] = {}
    for k, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            kinds.append("tensor")
            out[str(k)] = torch.Tensor(value.detach().cpu()).clone().contiguous()
        else:
            kinds.append(type(value).__name__)
    return {"status": "returned", "kinds": kinds, "cpu_s": cpu}, out


def _child(request: dict[str, Any], payload: bytes, result_fd: int, output_fd: int, workdir: str) -> None:
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    limits = CONFINE.Limits(request["cpu_s"], request["memory_bytes"])
    confinement = CONFINE.confine(result_fd, workdir, limits)  # the result channel is now fd 3
    tensors = load(payload) if payload else {}
    header, out = _run_answer(request, tensors)
    header["confinement"] = confinement.applied
    try:
        data = save(out) if out else b""
    except Exception as err:  # noqa: BLE001 - a dtype safetensors cannot hold (complex, ...)
        header, data = {"status": "unsendable", "message": f"{type(err).__name__}: {err}"[:500]}, b""
    write_frame(3, json.dumps(header).encode())
    write_frame(3, data)


# ---------------------------------------------------------------- the warden: forks, watches, cleans up
def _adopted() -> list[int]:
    """The warden's children now (a check's leftovers are re-parented to it: it is a subreaper)."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(entry))
    return out


def _drain(fd: int, into: bytearray, cap: int) -> None:
    """The rest of a pipe whose writers have all ended (up to ``cap`` bytes kept; the rest read and dropped)."""
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except (BlockingIOError, OSError):
            return
        if not chunk:
            return
        if len(into) < cap:
            into += chunk


def _clean_up(pgid: int) -> int:
    """End the check's process group and every process it left; reap them. How many were left."""
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)
    left = 0
    for _ in range(200):
        children = _adopted()
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if not children:
            break
        left = max(left, len(children))
        time.sleep(0.005)
    return left


def _check(request: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
    """One check: fork, watch (output and result capped, wall time bounded), clean up, report."""
    workdir = tempfile.mkdtemp(prefix="tlite-answer-")
    os.chmod(workdir, 0o755)
    result_r, result_w = os.pipe()
    output_r, output_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the warden's loop
        code = 70
        try:
            os.close(result_r)
            os.close(output_r)
            _child(request, payload, result_w, output_w, workdir)
            code = 0
        except BaseException:  # noqa: BLE001 - the checker's own failure: said on the captured output
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(result_w)
    os.close(output_w)
    report: dict[str, Any] = {}
    result, output = bytearray(), bytearray()
    cap = int(request["max_result_bytes"])
    deadline = start + float(request["wall_s"])
    finished = None  # (status, rusage) once the child has ended by itself
    with selectors.DefaultSelector() as sel:
        sel.register(result_r, selectors.EVENT_READ, result)
        sel.register(output_r, selectors.EVENT_READ, output)
        while time.monotonic() < deadline:
            if sel.get_map():
                for key, _ in sel.select(timeout=max(0.0, min(0.25, deadline - time.monotonic()))):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fd)
                    elif key.data is output:
                        if len(output) < 4 * OUTPUT_CAP:
                            output += chunk
                    else:
                        result += chunk
                        if len(result) > cap:
                            report["too_large"] = True
                            sel.unregister(key.fd)
                if report.get("too_large"):
                    break
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                finished = (status, usage)
                break
            if not sel.get_map():
                time.sleep(0.005)
        else:
            report["timed_out"] = True
    if finished is None:  # still running: stopped here, then its status and CPU time read
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            _, status, usage = os.wait4(pid, 0)
            finished = (status, usage)
    report["left"] = _clean_up(pid)
    if not report.get("too_large"):  # what the child wrote before it ended, still in the pipes: read now
        _drain(result_r, result, cap + 1)
        _drain(output_r, output, 4 * OUTPUT_CAP)
        if len(result) > cap:
            report["too_large"] = True
    for fd in (result_r, output_r):
        with contextlib.suppress(OSError):
            os.close(fd)
    shutil.rmtree(workdir, ignore_errors=True)
    report["wall_s"] = time.monotonic() - start
    if finished is not None:
        status, usage = finished
        report["cpu_s"] = usage.ru_utime + usage.ru_stime
        if os.WIFSIGNALED(status):
            report["signal"] = signal.Signals(os.WTERMSIG(status)).name
        elif os.WIFEXITED(status):
            report["exit"] = os.WEXITSTATUS(status)
    report["output"] = output.decode("utf-8", "replace")[:OUTPUT_CAP]
    answer, data = {}, b""
    if not report.get("too_large") and len(result) >= 8:
        try:
            size = struct.unpack(">Q", result[:8])[0]
            answer = json.loads(bytes(result[8 : 8 + size]))
            rest = result[8 + size :]
            data = bytes(rest[8 : 8 + struct.unpack(">Q", rest[:8])[0]])
        except (ValueError, struct.error, UnicodeDecodeError):
            report["garbled"] = True
    report["answer"] = answer if isinstance(answer, dict) else {}
    return report, data


def _warm_up() -> None:
    """What every answer's first operations would otherwise each pay in its own child: torch's lazy
    set-up of the operations answers use, in float64 and float32, and the codecs a child may need."""
    for name in ("ascii", "latin-1", "utf-8", "idna"):
        codecs.lookup(name)
    for dtype in (torch.float32, torch.float64):
        a = torch.randn(8, 8, dtype=dtype)
        s = (a @ a.T + a).softmax(-1) * torch.exp(a) / torch.sqrt(a * a + 1)
        s = F.layer_norm(s, (8,)) + torch.erf(a) + torch.tanh(a) + torch.relu(a)
        s = F.gelu(s) + s.mean(-1, keepdim=True) + s.var(-1, keepdim=True) + s.amax(-1, keepdim=True)
        (torch.zeros(8, 8, dtype=dtype).index_add_(0, torch.arange(8), s) * torch.linalg.norm(a)).sum().item()


def main() -> None:
    global CONFINE
    CONFINE = _confine_module()
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)  # nothing printed here can reach the channel
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    torch.set_num_threads(1)
    _warm_up()
    write_frame(replies, json.dumps({"ready": True, "landlock": CONFINE.landlock_version()}).encode())
    while True:
        try:
            request = json.loads(read_frame(requests))
            payload = read_frame(requests)
        except EOFError:
            return
        report, data = _check(request, payload)
        write_frame(replies, json.dumps(report).encode())
        write_frame(replies, data)


CONFINE: Any = None

if __name__ == "__main__":
    main()

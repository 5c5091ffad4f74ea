"""Checking a learner's function on the tensors of a real forward pass, in float64.

``check(exercise, function, source)`` calls the function with the exercise's arguments and compares
each result with what PyTorch (a forward step) or autograd (a backward step) gives. A result passes
within a relative tolerance of 1e-6 of the largest expected value. Otherwise the ``Verdict`` names the
first element that differs (its index along the result's axes), the two values and the relative error,
and, where it recognises one, the likely cause: a result of the transposed shape, a flipped sign, a
constant factor (a missing or extra 1/N), or one of the exercise's known mistakes (a softmax over the
wrong axis, ...). Its ``cells`` are a map of the wrong result: the learner's value minus the expected one
over the matrix that holds the first difference (a 3-D result's slice along its first axis; a vector as
one row), and which cells are outside the tolerance, so a page can outline them. Nothing the learner's
function does to its arguments reaches the check: it gets copies.
"""

from __future__ import annotations

import importlib.util
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from .exercise import Exercise

RTOL = 1e-6
MAX_CELLS = 65_536  # the largest error map a verdict carries (a 64-token x 1,024-unit matrix)


@dataclass(frozen=True)
class Verdict:
    """A check's result: whether it passed, the line a learner reads (where and by how much a wrong
    answer differs), and the likely cause when one is recognised."""

    passed: bool
    message: str
    cause: str | None = None  # the likely cause, when one is recognised
    # the wrong result's map: {"name", "slice", "shape", "difference" (rows of mine - expected), "wrong"
    # (rows of 0/1: outside the tolerance)}, when the result had the right shape but wrong values
    cells: dict[str, Any] | None = None
    cpu_s: float | None = None  # the CPU time of the function's own call, where it was measured
    printed: str = ""  # what the answer printed while it was checked (capped)

    def to_dict(self) -> dict[str, Any]:
        """The verdict as JSON-ready values (``--json``, the server's answer)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            bool(data["passed"]),
            str(data["message"]),
            data.get("cause"),
            data.get("cells"),
            data.get("cpu_s"),
            str(data.get("printed", "")),
        )


def load_function(path: str | Path, name: str) -> Callable[..., Any]:
    """The function ``name`` defined in the learner's file ``path`` (a ``ValueError`` says what is wrong)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file (write one with: tlite exercise show NAME --out {path})")
    spec = importlib.util.spec_from_file_location(f"exercise_{name}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # noqa: BLE001 - the learner's file: any error is theirs to see
        raise ValueError(f"{path} does not run: {type(err).__name__}: {err}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"{path} defines no function {name}(...)")
    return function


def _copies(given: dict[str, Any], names: tuple[str, ...]) -> list[Any]:
    return [given[n].clone() if isinstance(given[n], Tensor) else given[n] for n in names]


def _as_tuple(x: Any) -> tuple[Any, ...]:  # noqa: ANN401
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def check(
    exercise: Exercise, function: Callable[..., Any], given: dict[str, Any], expected: tuple[Any, ...] | None = None
) -> Verdict:
    """The learner's ``function``, called in this process, on the arguments ``given``
    (``exercise.inputs(source)``) against the expected results (``expected``: computed when not given)."""
    try:
        got = _as_tuple(function(*_copies(given, exercise.arguments)))
    except NotImplementedError:
        return Verdict(False, f"{exercise.function} is not implemented yet (it raises NotImplementedError)")
    except Exception as err:  # noqa: BLE001 - the learner's code: any error is an answer to explain
        frames = traceback.extract_tb(err.__traceback__)
        code = getattr(function, "__code__", None)
        theirs = [f for f in frames if code is not None and f.filename == code.co_filename] or frames[-1:]
        where = f" (line {theirs[-1].lineno} of {Path(theirs[-1].filename).name})" if theirs else ""
        return Verdict(False, f"{exercise.function} raised {type(err).__name__}: {err}{where}")
    return judge(exercise, got, given, expected if expected is not None else expected_of(exercise, given))


def expected_of(exercise: Exercise, given: dict[str, Any]) -> tuple[Any, ...]:
    """What ``exercise``'s function must return on ``given``: PyTorch's operation, or autograd."""
    return _as_tuple(exercise.expected(**given))


def judge(exercise: Exercise, got: tuple[Any, ...], given: dict[str, Any], expected: tuple[Any, ...]) -> Verdict:
    """The verdict on results ``got`` (whatever the function returned, as a tuple) against ``expected``."""
    if len(got) != len(expected):
        wanted = ", ".join(exercise.returns)
        return Verdict(False, f"{exercise.function} returned {len(got)} value(s); it should return {wanted}")
    for k, (mine, right) in enumerate(zip(got, expected)):
        verdict = _compare(exercise, k, mine, right, given)
        if verdict is not None:
            return verdict
    return Verdict(True, f"{exercise.function}: right, every element within {RTOL:g} (relative) of the expected")


def _compare(exercise: Exercise, k: int, mine: Any, right: Tensor, given: dict[str, Any]) -> Verdict | None:  # noqa: ANN401
    name = exercise.returns[k]
    if not isinstance(mine, Tensor):
        what = mine if isinstance(mine, str) else type(mine).__name__  # the sandbox sends a type's name
        return Verdict(False, f"{name}: a {what}, not a tensor")
    integer = not (mine.is_floating_point() or mine.is_complex()) and right.is_floating_point()
    mine = mine.detach().double()
    right = right.double()
    if mine.shape != right.shape:
        cause = None
        if mine.dim() >= 2 and mine.transpose(-2, -1).shape == right.shape and _close(mine.transpose(-2, -1), right):
            cause = "a missing transpose: the result is the right one, transposed"
        message = f"{name} has shape {tuple(mine.shape)}; it should be {tuple(right.shape)}"
        return Verdict(False, message + (f" (likely cause: {cause})" if cause else ""), cause)
    if not torch.isfinite(mine).all():
        index = _index(~torch.isfinite(mine))
        return Verdict(False, f"{name}{list(index)} is {mine[index].item()}: not a finite number", "NaN or infinity")
    if _close(mine, right):
        return None
    index = _index(~torch.isclose(mine, right, rtol=RTOL, atol=RTOL * _scale(right)))
    a, b = mine[index].item(), right[index].item()
    scale = _scale(right)
    if abs(b) > RTOL * scale:
        off = f"relative error {abs(a - b) / abs(b):.2e}"
    else:  # an expected 0 (a masked score, a ReLU that stopped): the tolerance is the largest value's
        off = f"off by {abs(a - b):.2e}, where {RTOL:g} of the largest expected value is {RTOL * scale:.1e}"
    cause = _cause(exercise, k, mine, right, given)
    if integer and cause is None:
        cause = f"an integer result ({name} is not a float tensor): its values were cut to whole numbers"
    message = f"{name}{list(index)} is {a:.8g}; it should be {b:.8g} ({off}; {name} has shape {tuple(right.shape)})"
    return Verdict(
        False, message + (f"; likely cause: {cause}" if cause else ""), cause, _cells(name, mine, right, index)
    )


def _cells(name: str, mine: Tensor, right: Tensor, index: tuple[int, ...]) -> dict[str, Any] | None:
    """The map of a wrong result (see the module docstring), or ``None`` when it would be too large."""
    lead = index[:-2]  # a 3-D or 4-D result: the matrix holding the first difference
    a, b = (mine[lead], right[lead]) if lead else (mine, right)
    if a.dim() < 2:
        a, b = a.reshape(1, -1), b.reshape(1, -1)  # (1, N): a vector as one row
    if a.numel() > MAX_CELLS:
        return None
    wrong = ~torch.isclose(a, b, rtol=RTOL, atol=RTOL * _scale(right))
    return {
        "name": name,
        "slice": list(lead),
        "shape": list(a.shape),
        "difference": [[float(f"{v:.6g}") for v in row] for row in (a - b).tolist()],
        "wrong": wrong.int().tolist(),
    }


def _scale(t: Tensor) -> float:
    return float(t.abs().max()) if t.numel() else 1.0


def _close(a: Tensor, b: Tensor) -> bool:
    return bool(torch.allclose(a, b, rtol=RTOL, atol=RTOL * _scale(b)))


def _index(where: Tensor) -> tuple[int, ...]:
    """The first element (in row-major order) where ``where`` holds."""
    flat = int(where.reshape(-1).nonzero()[0])
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), where.shape))


def _cause(exercise: Exercise, k: int, mine: Tensor, right: Tensor, given: dict[str, Any]) -> str | None:
    """The likely reason ``mine`` differs from ``right``, when a common one fits."""
    for cause, mistake in exercise.mistakes.items():
        wrong = _as_tuple(mistake(**given))
        if k < len(wrong) and isinstance(wrong[k], Tensor) and wrong[k].shape == mine.shape:
            if _close(mine, wrong[k].double()):
                return cause
    if _close(mine, -right):
        return "a flipped sign: the result is the right one times −1"
    if mine.dim() >= 2 and mine.shape[-1] == mine.shape[-2] and _close(mine.transpose(-2, -1), right):
        return "a missing transpose: the result is the right one, transposed"
    big = right.abs() > 1e-3 * _scale(right)
    if big.any():
        ratio = (mine[big] / right[big]).median()
        if torch.isfinite(ratio) and abs(float(ratio) - 1) > 1e-3 and _close(mine, ratio * right):
            r = float(ratio)
            if r == 0:
                return None
            n = round(1 / r) if abs(r) < 1 else round(r)
            return f"a constant factor: the result is {r:.6g} times the right one (a missing or extra 1/{n}?)"
    return None

"""``Exercise``: one step of the posts' equations for a learner to write, and how it is checked.

An exercise names the function the learner writes (its arguments and results), states the step's
forward in the posts' notation (column-major) and ours (row-major, ``(T, C)``) and what is asked of it,
never the answer's formula: its up to three hints reveal more and more, the last one the formula. It
holds a solution as a learner would write it (``solutions``: plain PyTorch, self-contained).
``inputs(source)`` takes the tensors of a real forward pass (``exercises.source``); ``expected`` gives
what the learner's function must return: PyTorch's own operation for a forward step, autograd for a
backward one. ``mistakes`` are wrong answers often written (a softmax over the wrong axis, ...), by the
cause a learner is told when theirs matches one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from .solutions import IMPORTS

Inputs = dict[str, Any]  # argument name -> a float64 tensor (or a number: eps, lr, the step)


@dataclass(frozen=True)
class Exercise:
    name: str  # "dense-backward": what `tlite exercise` calls it
    title: str
    part: str  # where the posts have the step, or "not in the posts: ..."
    posts: str  # the step's forward as the posts write it (column-major), or "—" where they have none
    ours: str  # the step's forward as we compute it (row-major)
    asked: str  # what the function computes (for a backward step: which gradients, from what)
    arguments: tuple[str, ...]
    returns: tuple[str, ...]
    shapes: str  # each argument's and result's shape, by letter
    hints: tuple[str, ...]  # the last one gives the answer's formula
    solution: Callable[..., Any]  # a solution as a learner writes it (``solutions``)
    inputs: Callable[[Any], Inputs]  # a Source -> the arguments
    expected: Callable[..., Any]  # the arguments -> the right results (PyTorch's operation, or autograd)
    mistakes: dict[str, Callable[..., Any]] = field(default_factory=dict)

    @property
    def function(self) -> str:
        """The name of the function the learner writes: ``dense_backward``."""
        return self.name.replace("-", "_")

    def stub(self) -> str:
        """The file a learner edits: the statement, and the function to write."""
        hint = "\n".join(f"    {line}" for line in self.shapes.splitlines())
        returns = ", ".join(self.returns)
        return (
            f'"""{self.title} ({self.part})\n\n{self.statement()}\n\n'
            f"Check it: tlite exercise check {self.name} THIS_FILE [--run RUN]\n"
            f'Hints, one at a time: tlite exercise hint {self.name}\n"""\n\nimport math\n\nimport torch\n\n\n'
            f"def {self.function}({', '.join(self.arguments)}):\n"
            f'    """Shapes:\n{hint}\n    Returns {returns}."""\n'
            f"    raise NotImplementedError  # your code here\n"
        )

    def statement(self) -> str:
        """The step's forward, the posts' way and ours, and what is asked (never the answer's formula)."""
        return (
            f"The step, as the posts write it (column-major): {self.posts}\n"
            f"As we compute it (row-major, a token is a row): {self.ours}\n"
            f"Asked: {self.asked}"
        )

    def solution_source(self) -> str:
        """A solution that passes, exactly as ``tlite exercise solution`` prints it (imports included)."""
        return f"{IMPORTS}\n\n{inspect.getsource(self.solution)}"


def autograd(forward: Callable[..., Tensor], wrt: tuple[str, ...], upstream: str = "dy") -> Callable[..., Any]:
    """``expected`` of a backward exercise: the gradients of ``forward``'s output, times the upstream
    gradient ``upstream``, with respect to the arguments ``wrt``, as autograd computes them."""

    def expected(**given: Any) -> tuple[Tensor, ...]:  # noqa: ANN401
        args = {
            k: (v.detach().clone().requires_grad_(k in wrt) if isinstance(v, Tensor) else v) for k, v in given.items()
        }
        dy = args.pop(upstream)
        out = forward(**{k: v for k, v in args.items() if k in inspect.signature(forward).parameters})
        grads = torch.autograd.grad(out, [args[k] for k in wrt], dy.detach())
        return tuple(g.detach() for g in grads)

    return expected


def only(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` called with the arguments it names, of all an exercise's inputs (a known mistake)."""
    names = inspect.signature(function).parameters

    def call(**given: Any) -> Any:  # noqa: ANN401
        return function(**{k: v for k, v in given.items() if k in names})

    return call

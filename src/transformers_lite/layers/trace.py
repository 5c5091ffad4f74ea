"""``Trace``: how a forward pass hands back its intermediate tensors, and how it is changed from outside.

Every model's ``forward`` takes ``trace=``; each module names the steps of its equations as it computes
them (``attention.q``, ``attention.weights``, ``feed_forward.hidden``, ...) by calling the trace it was
given, scoped to its own place in the model (``blocks.0.attention``). A ``Trace`` keeps what it is
shown and may *edit* a step on its way (zero a head, scale a neuron): the forward then continues with
the edited tensor, so an intervention runs through the model's own code and never touches its
weights. Nothing is stored on the modules, so two requests may use one model at the same time.

The default, ``NO_TRACE``, keeps nothing, edits nothing and costs a method call per step.
"""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor

Edit = Callable[[Tensor], Tensor]


class NamedSteps:
    """Tensors by step name (``tensors``), read as ``steps["blocks.0.attention.q"]``, in forward order."""

    tensors: dict[str, Tensor]

    def __getitem__(self, name: str) -> Tensor:
        return self.tensors[name]

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def names(self) -> list[str]:
        """Every step, in the order the forward computed them."""
        return list(self.tensors)


class Trace(NamedSteps):
    """Collects ``name -> tensor`` for one forward pass. ``edits`` maps a full step name to a function
    applied to that step's tensor before the forward goes on (a name without a dot, e.g. ``position``,
    edits every step of that name, e.g. ``encoder.position`` and ``decoder.position``). Tensors are kept
    detached, as computed (an edited step is kept as edited)."""

    active = True

    def __init__(self, edits: dict[str, Edit] | None = None, *, prefix: str = "", _store: dict | None = None) -> None:
        self.edits = edits or {}
        self.prefix = prefix
        self.tensors: dict[str, Tensor] = {} if _store is None else _store

    def at(self, name: str) -> Trace:
        """The same trace, scoped to the sub-module ``name`` (its steps are recorded as ``name.step``)."""
        return Trace(self.edits, prefix=f"{self.prefix}{name}.", _store=self.tensors)

    def __call__(self, step: str, x: Tensor) -> Tensor:
        """Record ``x`` as ``step`` (after its edit, when one is asked for) and return what the forward uses."""
        name = self.prefix + step
        edit = self.edits.get(name) or (self.edits.get(step) if "." not in step else None)
        if edit is not None:
            x = edit(x)
        self.tensors[name] = x.detach()
        return x


class _NoTrace(Trace):
    """Records nothing: the forward passes of training and decoding."""

    active = False

    def __init__(self) -> None:
        super().__init__()

    def at(self, name: str) -> Trace:
        return self

    def __call__(self, step: str, x: Tensor) -> Tensor:
        return x


NO_TRACE: Trace = _NoTrace()

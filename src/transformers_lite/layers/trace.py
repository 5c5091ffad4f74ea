"""``Trace``: how a forward pass hands back its intermediate tensors, and how it is changed from outside.

Every model's ``forward`` takes ``trace=``. Each layer declares the steps of its equations (``Step``
records built from its own settings, ``layers.steps``) with ``trace.declare(steps)`` or
``trace.at(name, steps)``, and calls the trace with each step as it computes it, naming the tensors
the step was computed from: ``trace("q", q, x, w.qkv, w.qkv_bias)``. The trace keeps the tensor, the
step's record and its inputs, so what it says about a step is what that layer computed, and which
steps (and parameters) each step read is known without reading any name (``inputs_of``).

A ``Trace`` may also *edit* a step on its way (zero a head, scale a neuron): the forward then continues
with the edited tensor, so an intervention runs through the model's own code and never touches its
weights. An edit names its step, or the layer that computes it and the step's role (``(scope, role)``:
``("blocks.0.attention", "heads")``), so nothing outside the layers assembles a step's name. Nothing is
stored on the modules, so two requests may use one model at the same time. ``live`` holds each step as
the forward went on with it: with gradients on, in the autograd graph (the backward trace asks autograd
for the loss's gradient with respect to each).

The default, ``NO_TRACE``, keeps nothing, edits nothing and costs a method call per step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from torch import Tensor

from .steps import Step

Edit = Callable[[Tensor], Tensor]
EditKey = str | tuple[str, str]  # a step's name, or (the scope of the layer computing it, the step's role)


@dataclass(frozen=True)
class Place:
    """Where a step sits in the model, as the modules that scoped the trace said (no name is parsed)."""

    scope: str = ""  # the module that computed it: "blocks.0.attention" ("" at the top)
    block: str = ""  # the block it is part of: "blocks.0", "decoder.blocks.1" ("" outside every block)
    member: str = ""  # an ensemble's member it is part of: "members.0" ("" otherwise)
    side: str = ""  # a translator's "source" (its encoder) or "target" (its decoder); "" for one-sided models


class NamedSteps:
    """Tensors by step name (``tensors``), read as ``steps["blocks.0.attention.q"]``, in forward order; and
    the steps found by what they are and where they sit (``find``), never by a name put together."""

    tensors: dict[str, Tensor]

    def __getitem__(self, name: str) -> Tensor:
        return self.tensors[name]

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def names(self) -> list[str]:
        """Every step, in the order the forward computed them."""
        return list(self.tensors)

    def declared(self) -> Iterator[tuple[str, Step, Place]]:
        """Each recorded step's name, declaration and place, in forward order."""
        raise NotImplementedError

    def find(
        self, *, role: str | None = None, kind: str | None = None, side: str | None = None, member: str | None = None
    ) -> list[str]:
        """The steps (in forward order) that play ``role``, are of ``kind`` (``norm`` matches every
        ``norm:NAME``) and sit on ``side`` and in ``member`` (each ``None``: any)."""
        return [
            name
            for name, step, place in self.declared()
            if (role is None or step.role == role)
            and (kind is None or kind in (step.kind, step.kind.partition(":")[0]))
            and (side is None or place.side == side)
            and (member is None or place.member == member)
        ]


@dataclass
class Recorded:
    """One step as a forward computed it: its declaration, the tensors it read (``inputs``, in the order
    the layer gave them; ``None`` for an absent bias), the names of those that were steps themselves,
    and where it sits."""

    step: Step
    own: str  # its name in its layer: "q"
    inputs: tuple[Tensor | None, ...]
    read_steps: tuple[str | None, ...]
    place: Place


@dataclass
class _Shared:
    """What every scope of one trace writes to."""

    tensors: dict[str, Tensor] = field(default_factory=dict)
    records: dict[str, Recorded] = field(default_factory=dict)
    live: dict[str, Tensor] = field(default_factory=dict)  # each step's tensor as the forward goes on with it
    by_id: dict[int, str] = field(default_factory=dict)  # id of a live tensor -> its step


class Trace(NamedSteps):
    """Collects ``name -> tensor`` for one forward pass. ``edits`` maps a full step name to a function
    applied to that step's tensor before the forward goes on (a name without a dot, e.g. ``position``,
    edits every step of that name, e.g. ``encoder.position`` and ``decoder.position``). ``tensors`` are
    kept detached, as computed (an edited step as edited); ``live`` holds them as the forward used them."""

    active = True

    def __init__(
        self,
        edits: Mapping[EditKey, Edit] | None = None,
        *,
        prefix: str = "",
        steps: Mapping[str, Step] | None = None,
        place: Place = Place(),
        _shared: _Shared | None = None,
    ) -> None:
        self.edits = edits or {}
        self.prefix, self.steps, self.place = prefix, steps or {}, place
        self._shared = _Shared() if _shared is None else _shared
        self.tensors = self._shared.tensors
        self.records = self._shared.records
        self.live = self._shared.live

    def at(
        self,
        name: str,
        steps: Mapping[str, Step] | None = None,
        *,
        block: bool = False,
        member: bool = False,
        side: str | None = None,
    ) -> Trace:
        """The same trace, scoped to the sub-module ``name`` (its steps are recorded as ``name.step``),
        which computes the ``steps`` declared (none: a scope that only holds others); ``block``: the
        sub-module is a transformer block, ``member``: an ensemble's member, ``side``: a translator's
        ``source`` or ``target`` side (``Place``; none: the enclosing scope's)."""
        path, here = self.prefix + name, self.place
        block_of, member_of = path if block else here.block, path if member else here.member
        place = Place(path, block_of, member_of, here.side if side is None else side)
        return Trace(self.edits, prefix=path + ".", steps=steps, place=place, _shared=self._shared)

    def declare(self, steps: Mapping[str, Step]) -> Trace:
        """The same scope, computing the ``steps`` a layer declares (by their own names)."""
        return Trace(self.edits, prefix=self.prefix, steps=steps, place=self.place, _shared=self._shared)

    def __call__(self, own: str, x: Tensor, *inputs: Tensor | None) -> Tensor:
        """Record ``x`` as the declared step ``own`` computed from ``inputs`` (after its edit, when one is
        asked for) and return what the forward uses."""
        step = self.steps.get(own)
        name = self.prefix + own
        if step is None:
            declared = ", ".join(self.steps) or "none"
            raise LookupError(f"step {name!r} was not declared by the layer computing it (declared here: {declared})")
        edit = self.edits.get(name) or (self.edits.get(own) if "." not in own else None)
        if edit is None and step.role:  # an edit of the step playing this role in this layer
            edit = self.edits.get((self.place.scope, step.role))
        if edit is not None and step.kind != "identity":  # an identity step's tensor was edited as its first name
            x = edit(x)
        shared = self._shared
        read = tuple(None if t is None else shared.by_id.get(id(t)) for t in inputs)
        shared.tensors[name] = x.detach()
        shared.records[name] = Recorded(step, own, inputs, read, self.place)
        shared.live[name] = x  # kept alive, so its id names this step and no later tensor
        shared.by_id[id(x)] = name
        return x

    def step(self, name: str) -> Step:
        """The declaration of the recorded step ``name``."""
        return self.records[name].step

    def declared(self) -> Iterator[tuple[str, Step, Place]]:
        return ((name, r.step, r.place) for name, r in self.records.items())

    def inputs_of(self, name: str, parameters: Mapping[int, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What the step ``name`` was computed from: the steps, and the parameters (``parameters`` maps
        ``id(parameter)`` to its name), each in the layer's order; constants (a mask, rotary angles) and
        absent biases are left out."""
        record = self.records[name]
        steps = tuple(s for s in record.read_steps if s is not None)
        params = tuple(parameters[id(t)] for t in record.inputs if t is not None and id(t) in parameters)
        return steps, params


class _NoTrace(Trace):
    """Records nothing: the forward passes of training and decoding."""

    active = False

    def __init__(self) -> None:
        super().__init__()

    def at(
        self,
        name: str,
        steps: Mapping[str, Step] | None = None,
        *,
        block: bool = False,
        member: bool = False,
        side: str | None = None,
    ) -> Trace:
        return self

    def declare(self, steps: Mapping[str, Step]) -> Trace:
        return self

    def __call__(self, own: str, x: Tensor, *inputs: Tensor | None) -> Tensor:
        return x


NO_TRACE: Trace = _NoTrace()

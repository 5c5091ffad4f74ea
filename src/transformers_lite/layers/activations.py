"""The nonlinearities, one record each (``Activation``) in one table (``ACTIVATIONS``).

A record holds everything anything asks of a nonlinearity: the function the layers apply, its
derivative (the hand-derived backward rule of an ``activation:NAME`` step multiplies by it), how our
equations write it and how the posts do (``None``: no post uses it), and its Hugging Face name
(``None``: GPT-2 has none, so an export names it as a difference). Configs check names against the
table, the feed-forward layers and the pretraining head apply it, ``backprop.rules`` differentiates it,
``interop.gpt2`` names it both ways. ``activation(name)`` is the one lookup: a name not in the table
is a ``ValueError`` naming the choices there, never a fall-through to another function.

A new nonlinearity is one entry here. Shapes: any; each function acts entry by entry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

_C = math.sqrt(2 / math.pi)  # GELU's tanh approximation: 0.5 a (1 + tanh(c (a + 0.044715 a³)))


@dataclass(frozen=True)
class Activation:
    """One nonlinearity: ``function(a)``, its derivative ``derivative(a) = function'(a)`` (entry by
    entry), ``written`` in our equations (``GELU``), ``post`` in the posts' Julia (``relu``, applied as
    ``relu.(…)``; ``None``: no post uses it), ``hf`` its Hugging Face ``activation_function`` (``None``:
    none) and ``hf_aliases``, other Hugging Face names read as this one."""

    name: str
    function: Callable[[Tensor], Tensor]
    derivative: Callable[[Tensor], Tensor]
    written: str
    post: str | None
    hf: str | None
    hf_aliases: tuple[str, ...] = ()


def _gelu_derivative(a: Tensor) -> Tensor:
    """``Φ(a) + a φ(a)``: the normal distribution's CDF plus ``a`` times its density."""
    return 0.5 * (1 + torch.erf(a / math.sqrt(2))) + a * torch.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)


def _gelu_tanh_derivative(a: Tensor) -> Tensor:
    u = torch.tanh(_C * (a + 0.044715 * a**3))
    return 0.5 * (1 + u) + 0.5 * a * (1 - u * u) * _C * (1 + 3 * 0.044715 * a * a)


def _silu_derivative(a: Tensor) -> Tensor:
    """``(a σ(a))' = σ(a) (1 + a (1 − σ(a)))``."""
    s = torch.sigmoid(a)
    return s * (1 + a * (1 - s))


# gelu_tanh: the tanh approximation GPT-2 uses; relu2: ReLU squared, relu(a)² (So et al. 2021, "Primer"; the
# modded-nanogpt speedrun's feed-forward); silu: a σ(a), post 001's softrelu, the gate of Llama's SwiGLU
ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("relu", F.relu, lambda a: (a > 0).to(a.dtype), "ReLU", "relu", "relu"),
        Activation("gelu", F.gelu, _gelu_derivative, "GELU", None, "gelu"),
        Activation(
            "gelu_tanh",
            lambda a: F.gelu(a, approximate="tanh"),
            _gelu_tanh_derivative,
            "GELU_tanh",
            None,
            "gelu_new",
            ("gelu_pytorch_tanh",),
        ),
        Activation("relu2", lambda a: F.relu(a).square(), lambda a: 2 * a.clamp(min=0), "ReLU²", None, "relu2"),
        Activation("silu", F.silu, _silu_derivative, "SiLU", "softrelu", "silu", ("swish",)),
    )
}


def activation(name: str) -> Activation:
    """The record of the nonlinearity ``name``; a ``ValueError`` naming the known ones otherwise."""
    found = ACTIVATIONS.get(name)
    if found is None:
        raise ValueError(f"unknown activation {name!r}; choose one of {', '.join(ACTIVATIONS)}")
    return found

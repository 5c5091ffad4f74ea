"""An ensemble of review classifiers trained together: ``members`` independent models whose class
probabilities are averaged.

Why in one model: a run directory, ``tlite evaluate``, ``tlite classify`` and the inspector then
treat the ensemble as any classifier. The members share nothing but the input: each has its own
embedding, blocks and head, starts from its own random draw, and during training each reads its own
order of the reviews (``tasks.classifier``), so they make different mistakes, which averaging cancels.

Shapes: M members, B batch, T tokens, K labels.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..config import ClassifierConfig
from ..layers import NO_TRACE, Trace
from ..layers.steps import Step
from .classifier import TransformerClassifier


def mixture_step(n_labels: int, members: int) -> Step:
    """The ensemble's logits from its ``members``' (one logit: the logit of their mean sigmoid)."""
    if n_labels == 1:
        ours = f"z = log(p̄ / (1 − p̄)), p̄ = (1/{members}) Σ_m σ(z_m): the logit of the members' mean probability"
    else:
        ours = f"z = log((1/{members}) Σ_m softmax(z_m)): the log of the members' mean probability"
    meaning = "the ensemble's class scores: their softmax is the mean of its members' probabilities"
    words = f"the {members} members' probabilities averaged, then turned back into logits"
    return Step("mixture", "K", ours, None, meaning, computes=words)


class ClassifierEnsemble(nn.Module):
    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        if config.members < 2:
            raise ValueError(f"an ensemble needs members >= 2, got members={config.members}")
        self.config = config
        one = config.replace(members=1)
        self.members = nn.ModuleList(TransformerClassifier(one) for _ in range(config.members))
        self.steps = {"logits": mixture_step(config.n_labels, config.members)}

    def member_logits(self, ids: Tensor, valid: Tensor | None = None, *, trace: Trace = NO_TRACE) -> Tensor:
        """Every member's logits ``(M, B, K)`` for ``ids (B, T)`` (traced as ``members.N.*``)."""
        return torch.stack(self._members(ids, valid, trace))  # M x (B, K) -> (M, B, K)

    def _members(self, ids: Tensor, valid: Tensor | None, trace: Trace) -> list[Tensor]:
        return [
            member(ids, valid, trace=trace.at(f"members.{i}", member=True)) for i, member in enumerate(self.members)
        ]

    def forward(self, ids: Tensor, valid: Tensor | None = None, *, trace: Trace = NO_TRACE) -> Tensor:
        """Logits ``(B, K)`` whose softmax is the members' mean probability (for one logit: whose
        sigmoid is the members' mean sigmoid), so argmax, softmax and cross-entropy read the ensemble."""
        each = self._members(ids, valid, trace)
        logits = torch.stack(each).float()  # (M, B, K)
        m = len(self.members)
        trace = trace.declare(self.steps)
        if logits.shape[-1] == 1:  # post 000's single logit: average the probabilities of "positive"
            log_p = torch.logsumexp(nn.functional.logsigmoid(logits), 0) - math.log(m)  # (B, 1): log mean p
            log_q = torch.logsumexp(nn.functional.logsigmoid(-logits), 0) - math.log(m)  # (B, 1): log mean (1 - p)
            return trace("logits", log_p - log_q, *each)  # the logit of the mean probability
        log_mean = torch.logsumexp(torch.log_softmax(logits, dim=-1), 0) - math.log(m)  # log mean p (B, K)
        return trace("logits", log_mean, *each)


def classifier_members(model: nn.Module) -> list[TransformerClassifier]:
    """The single classifiers inside ``model``: its members for an ensemble, else ``[model]``."""
    return list(model.members) if isinstance(model, ClassifierEnsemble) else [model]  # type: ignore[arg-type, list-item]

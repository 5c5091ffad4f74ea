"""Reading runs written by earlier releases: each old file is rewritten in memory when it is loaded
(files on disk are never modified).

From 0.1 (commit 5aaa26d):

* ``config.json``: ``context`` -> ``max_length`` and ``tie_weights``/``tie_output`` ->
  ``tie_embeddings``; ``embedding_init``/``embedding_window`` moved to the training recipe.
* tokenizer files: kind ``index`` -> ``word`` (post 000's words for classifiers, words and
  punctuation for translators).
* weights: ``attention.in_proj``/``out_proj`` -> ``attention.qkv``/``out``; the LayerNorms moved into
  ``Residual`` sub-layers (``norm_attention`` -> ``attention_residual.norm``, ...).

From 0.2:

* weights: the classifier's and the pretraining model's encoder moved into an ``Encoder`` module
  (``embedding.*``, ``blocks.*``, ``final_norm.*`` -> ``encoder.*``); the translator's too
  (``src_embedding`` -> ``encoder.embedding``, ``encoder.N`` -> ``encoder.blocks.N``, ``encoder_norm``
  -> ``encoder.final_norm``); its decoder blocks call their self-attention ``attention`` and keep
  cross-attention's Q, K and V in one ``qkv`` Dense, as self-attention does (``query`` and
  ``key_value`` are stacked into it).
* config values: the flatten head was ``head="seed"``, the words split ``split="seed"`` (read by the
  config and the tokenizer themselves).

Old optimizer states are renamed the same way (``rename_state``), so a run checkpointed by 0.2 resumes.
Runs of 0.1 (optimizer states stored by position) load for inference but cannot be resumed.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from ..config import RENAMED

DROPPED = ("embedding_init", "embedding_window")
NORMS = {
    "norm_attention": "attention_residual.norm",
    "norm_feedforward": "feed_forward_residual.norm",
    "norm_self": "self_attention_residual.norm",
    "norm_cross": "cross_attention_residual.norm",
}
ENCODER_NAMES = re.compile(r"^((?:members\.\d+\.)?)(embedding|blocks|final_norm)\.")  # 0.2 classifier / mlm
SEQ2SEQ_NAMES = [
    (re.compile(r"^src_embedding\."), "encoder.embedding."),
    (re.compile(r"^encoder\.(\d+)\."), r"encoder.blocks.\1."),
    (re.compile(r"^encoder_norm\."), "encoder.final_norm."),
    (re.compile(r"^decoder\.(\d+)\.self_attention(_residual)?\."), r"decoder.\1.attention\2."),
]


def upgrade_config(data: dict[str, Any]) -> dict[str, Any]:
    return {RENAMED.get(k, k): v for k, v in data.items() if k not in DROPPED}


OLD_SPLITS = {"seq2seq": "punct"}  # 0.1's index tokenizers: words and punctuation for translators, else words


def upgrade_tokenizer(family: str):  # noqa: ANN201
    """A function that rewrites an old tokenizer dict for a run of ``family``."""

    def upgrade(data: dict[str, Any]) -> dict[str, Any]:
        if data.get("kind") == "index":
            return {**data, "kind": "word", "split": OLD_SPLITS.get(family, "words")}
        return data

    return upgrade


def _encoder_name(name: str) -> str:
    return ENCODER_NAMES.sub(r"\1encoder.\2.", name)


def _translator_name(name: str) -> str:
    for pattern, new in SEQ2SEQ_NAMES:
        name = pattern.sub(new, name)
    return re.sub(r"\.cross_attention\.(query|key_value)\.", ".cross_attention.qkv.", name)


# per family: does a list of names follow 0.2's layout, and each name's new spelling
RENAMES = {
    "classifier": (lambda names: any(ENCODER_NAMES.match(n) for n in names), _encoder_name),
    "mlm": (lambda names: any(ENCODER_NAMES.match(n) for n in names), _encoder_name),
    "seq2seq": (
        lambda names: any(n.startswith("src_embedding.") or re.match(r"^encoder\.\d+\.", n) for n in names),
        _translator_name,
    ),
}


def rename(name: str, family: str) -> str:
    """A weight's name of 0.2 in today's model of ``family`` (names of today pass unchanged)."""
    return RENAMES[family][1](name) if family in RENAMES else name


def _is_old(names: list[str], family: str) -> bool:
    return family in RENAMES and RENAMES[family][0](names)


def rename_state(tensors: dict[str, torch.Tensor], family: str) -> dict[str, torch.Tensor]:
    """Tensors named as 0.2 named them (weights, or one field of the optimizer's state) under today's
    names; cross-attention's ``query`` and ``key_value`` rows stacked into ``qkv`` (Q first)."""
    if not _is_old(list(tensors), family):
        return tensors
    out: dict[str, torch.Tensor] = {}
    parts: dict[str, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        new = rename(key, family)
        if ".cross_attention.qkv." in new and (".query." in key or ".key_value." in key):
            parts.setdefault(new, {})["q" if ".query." in key else "kv"] = value
        else:
            out[new] = value
    for new, pieces in parts.items():
        first = pieces["q"] if "q" in pieces else pieces["kv"]
        # an optimizer's step count is one number for both: it stays one
        out[new] = torch.cat([pieces["q"], pieces["kv"]]) if len(pieces) == 2 and first.dim() else first
    return out


def _upgrade_01(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """0.1's names -> 0.2's (cross-attention's fused ``in_proj`` cut into ``query`` and ``key_value``)."""
    out: dict[str, torch.Tensor] = {}
    for key, value in tensors.items():
        parts = key.split(".")
        for i, part in enumerate(parts):
            if part in NORMS:
                parts[i] = NORMS[part]
        key = ".".join(parts).replace(".out_proj.", ".out.")
        if ".cross_attention.in_proj." in key:
            dim = value.shape[0] // 3
            out[key.replace(".in_proj.", ".query.")] = value[:dim].clone()
            out[key.replace(".in_proj.", ".key_value.")] = value[dim:].clone()
        else:
            out[key.replace(".in_proj.", ".qkv.")] = value
    return out


def upgrade_state_dict(family: str):  # noqa: ANN201
    """A function that renames the tensors of an older ``model.safetensors`` of a ``family`` run."""

    def upgrade(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        if any(".in_proj." in k or ".norm_" in k for k in tensors):
            tensors = _upgrade_01(tensors)
        return rename_state(tensors, family)

    return upgrade

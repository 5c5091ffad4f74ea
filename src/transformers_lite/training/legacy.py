"""Reading runs written by transformers-lite 0.1 (commit 5aaa26d), before the architecture refactor.

What changed, and how each old file is rewritten in memory when it is loaded (files on disk are
never modified):

* ``config.json``: ``context`` -> ``max_length`` and ``tie_weights``/``tie_output`` ->
  ``tie_embeddings``; ``embedding_init``/``embedding_window`` moved to the training recipe.
* tokenizer files: kind ``index`` -> ``word`` (seed 000's split for classifiers, words and
  punctuation for translators).
* weights: ``attention.in_proj``/``out_proj`` -> ``attention.qkv``/``out``; cross-attention's fused
  ``in_proj`` is cut into ``query`` and ``key_value``; the LayerNorms moved into ``Residual``
  sub-layers (``norm_attention`` -> ``attention_residual.norm``, ...).

Old checkpoints (optimizer states stored by position) load for inference but cannot be resumed.
"""

from __future__ import annotations

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


def upgrade_config(data: dict[str, Any]) -> dict[str, Any]:
    out = {RENAMED.get(k, k): v for k, v in data.items() if k not in DROPPED}
    return out


def upgrade_tokenizer(family: str):  # noqa: ANN201
    """A function that rewrites an old tokenizer dict for a run of ``family``."""

    def upgrade(data: dict[str, Any]) -> dict[str, Any]:
        if data.get("kind") == "index":
            return {**data, "kind": "word", "split": "punct" if family == "seq2seq" else "seed"}
        return data

    return upgrade


def upgrade_state_dict(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Rename (and cut, for cross-attention) the tensors of an old ``model.safetensors``."""
    if not any(".in_proj." in k or ".norm_" in k for k in tensors):
        return tensors  # already the current layout
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

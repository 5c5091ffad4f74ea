"""Attention masks with one convention: ``True`` means *may attend*.

Shapes: B batch, T query length, S key length.

* ``causal_mask(T, S)`` -> ``(T, S)``: query ``i`` sees keys ``j <= i + (S - T)``. With ``S > T`` the
  queries are the *last* ``T`` positions of an ``S``-long sequence (incremental decoding with a
  KV cache), so the same function serves the full forward and the cached one.
* ``padding_mask(lengths, T)`` / ``padding_mask_from_ids(ids, pad_id)`` -> ``(B, T)``: valid tokens.
* ``attention_mask(key_valid, causal=..., query_len=...)`` -> ``(B, 1, T, S)``: broadcastable over
  heads; combines key padding and look-ahead (decoder self-attention) or key padding alone
  (encoder self-attention, cross-attention where queries come from the target and keys from the
  source).
* ``with_look_ahead(mask, causal, T, S)``: what attention passes to the kernels: the combined mask,
  or ``None`` plus a flag when the fused kernel's own causal option says the same thing.

The posts (column-major Julia) build the causal mask as an upper-triangular ``(S, T)`` matrix
(``mask[j, i]`` = key ``j`` visible to query ``i``); ours is its transpose in row-major ``(T, S)``.
"""

from __future__ import annotations

import torch
from torch import Tensor


def causal_mask(query_len: int, key_len: int | None = None, device: torch.device | str | None = None) -> Tensor:
    """Look-ahead mask ``(T, S)``: True where query ``i`` may see key ``j`` (no future keys)."""
    key_len = query_len if key_len is None else key_len
    if query_len < 1 or key_len < query_len:
        raise ValueError(f"causal_mask needs 1 <= query_len <= key_len, got query_len={query_len}, key_len={key_len}")
    offset = key_len - query_len
    return torch.ones(query_len, key_len, dtype=torch.bool, device=device).tril(diagonal=offset)  # (T, S)


def padding_mask(lengths: Tensor | list[int], max_len: int | None = None) -> Tensor:
    """``(B, T)`` mask, True for the first ``lengths[b]`` positions of each row."""
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (B,), got shape {tuple(lengths.shape)}")
    if (lengths < 0).any():
        raise ValueError(f"lengths must be >= 0, got {lengths.tolist()}")
    longest = int(lengths.max()) if lengths.numel() else 0
    max_len = longest if max_len is None else max_len
    if longest > max_len:
        raise ValueError(f"a length of {longest} exceeds max_len={max_len}")
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]  # (B, T)


def padding_mask_from_ids(ids: Tensor, pad_id: int) -> Tensor:
    """``(B, T)`` mask, True where ``ids`` is not the pad id."""
    return ids != pad_id


def attention_mask(
    key_valid: Tensor | None,
    *,
    causal: bool = False,
    query_len: int | None = None,
    key_len: int | None = None,
) -> Tensor | None:
    """Combine key padding ``(B, S)`` and/or a look-ahead mask into ``(B, 1, T, S)`` (or ``(T, S)``).

    Returns ``None`` when nothing is masked, so callers can take the fast unmasked path.
    """
    if key_valid is not None:
        if key_valid.dim() != 2 or key_valid.dtype != torch.bool:
            raise ValueError(f"key_valid must be a (B, S) bool tensor, got {key_valid.dtype} {tuple(key_valid.shape)}")
        key_len = key_valid.shape[1]
    if not causal:
        return None if key_valid is None else key_valid[:, None, None, :]  # (B, 1, 1, S)
    if key_len is None:
        raise ValueError("a causal mask needs key_len (or key_valid)")
    query_len = key_len if query_len is None else query_len
    device = key_valid.device if key_valid is not None else None
    look_ahead = causal_mask(query_len, key_len, device=device)  # (T, S)
    if key_valid is None:
        return look_ahead
    return look_ahead[None, None, :, :] & key_valid[:, None, None, :]  # (B, 1, T, S)


def with_look_ahead(
    mask: Tensor | None, causal: bool, query_len: int, key_len: int, device: torch.device | str | None = None
) -> tuple[Tensor | None, bool]:
    """``(mask, is_causal)`` for attention: add the look-ahead part to ``mask`` when ``causal``.

    A single query is the newest position and may see every key, so it needs no look-ahead mask.
    Without another mask and with as many queries as keys, ``is_causal=True`` lets the fused kernel
    apply it without materialising ``(T, S)``; otherwise the look-ahead mask is built (offset when the
    queries are the last ``T`` of ``S`` positions, as with a KV cache) and combined with ``mask``.
    """
    if not causal or query_len == 1:
        return mask, False
    if mask is None and query_len == key_len:
        return None, True
    look_ahead = causal_mask(query_len, key_len, device=device)  # (T, S)
    return (look_ahead if mask is None else mask & look_ahead), False


def check_mask(mask: Tensor, batch: int, heads: int, query_len: int, key_len: int) -> None:
    """Raise ``ValueError`` unless ``mask`` is bool and broadcasts to ``(B, H, T, S)``."""
    if mask.dtype != torch.bool:
        raise ValueError(f"masks are bool tensors (True = may attend), got dtype {mask.dtype}")
    target = (batch, heads, query_len, key_len)
    shape = tuple(mask.shape)
    if len(shape) > 4 or any(m not in (1, t) for m, t in zip(shape[::-1], target[::-1])):
        raise ValueError(f"mask of shape {shape} does not broadcast to (B, H, T, S) = {target}")

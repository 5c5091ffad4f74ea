"""The fast decoding path for the character GPT: the same arithmetic as the model's modules, with as
few tensor operations per token as possible.

Decoding one token costs microseconds of arithmetic but hundreds of microseconds of per-operation
overhead on a CPU (module calls, autograd bookkeeping, small allocations). ``FastDecoder`` reads the
model's weights once (no copies), keeps every block's keys and values in one preallocated buffer
``(blocks, 2, B, H, L, D)`` (allocated once per generation, reused when the window slides), and runs
each block as about a dozen tensor operations under ``torch.inference_mode``. It handles every
``GeneratorConfig`` (pre-/post-norm, ReLU/GELU, learned positions or RoPE, biases or not).

The teaching path (``model(ids, cache=...)``, module calls that forward hooks see) stays the
reference: tests check that both give the same logits (within 1e-5) and the same sampled tokens.

Shapes: B batch, T new tokens, L capacity (the context), C channels, H heads, D head size, V vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..layers.masks import with_look_ahead


class FastDecoder:
    def __init__(self, model: nn.Module, batch: int) -> None:
        c = model.config
        self.model, self.config, self.batch = model, c, batch
        self.heads, self.dim_head = c.n_heads, c.dim // c.n_heads
        p = next(model.parameters())
        # one buffer for every block's keys and values: allocated here, once per generation
        self.cache = torch.zeros(
            c.n_blocks, 2, batch, c.n_heads, c.max_length, self.dim_head, dtype=p.dtype, device=p.device
        )  # (blocks, 2, B, H, L, D)
        self.length = 0
        self.act = model.blocks[0].feed_forward.act
        self.rope = model.blocks[0].attention.rope
        # every tensor a step reads, looked up once (module attribute lookups cost a microsecond each)
        self.blocks = [self._weights(i, block) for i, block in enumerate(model.blocks)]
        self.position = None if model.position_embedding is None else model.position_embedding.weight.detach()
        self.embedding = model.embedding.weight.detach()
        norm = model.final_norm
        self.final = None if norm is None else (norm.weight.detach(), norm.bias.detach(), norm.eps)
        self.head = (model.head.weight.detach(), None if model.head.bias is None else model.head.bias.detach())

    def _weights(self, i: int, block: nn.Module) -> tuple:
        attn, ff = block.attention, block.feed_forward
        n1, n2 = block.attention_residual.norm, block.feed_forward_residual.norm

        def d(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.detach()

        return (
            block.attention_residual.norm_first,
            d(n1.weight),
            d(n1.bias),
            n1.eps,
            d(attn.qkv.weight),
            d(attn.qkv.bias),
            d(attn.out.weight),
            d(attn.out.bias),
            d(n2.weight),
            d(n2.bias),
            n2.eps,
            d(ff.dense1.weight),
            d(ff.dense1.bias),
            d(ff.dense2.weight),
            d(ff.dense2.bias),
            self.cache[i, 0],
            self.cache[i, 1],
        )

    def reset(self) -> None:
        self.length = 0

    @torch.inference_mode()
    def step(self, ids: Tensor) -> Tensor:
        """Feed ``ids (B, T)``, the tokens after the ``length`` already cached; return the last logits ``(B, V)``."""
        b, t = ids.shape
        start, end = self.length, self.length + t
        if end > self.config.max_length:
            raise ValueError(f"sequence of {end} tokens exceeds the context length {self.config.max_length}")
        x = F.embedding(ids, self.embedding)  # (B, T, C)
        if self.position is not None:
            x = x + self.position[start:end]  # (B, T, C) + (T, C)
        mask, is_causal = with_look_ahead(None, True, t, end, ids.device)
        for weights in self.blocks:
            x = self._block(weights, x, start, end, mask, is_causal)
        self.length = end
        x = x[:, -1]  # (B, C)
        if self.final is not None:
            x = F.layer_norm(x, (x.shape[-1],), *self.final)
        return F.linear(x, *self.head)  # (B, C) @ (C, V) -> (B, V)

    def _block(self, weights: tuple, x: Tensor, start: int, end: int, mask: Tensor | None, is_causal: bool) -> Tensor:
        pre, g1, b1, e1, wqkv, bqkv, wo, bo, g2, b2, e2, w1, bb1, w2, bb2, keys, values = weights
        b, t, dim = x.shape
        h = F.layer_norm(x, (dim,), g1, b1, e1) if pre else x
        qkv = F.linear(h, wqkv, bqkv).view(b, t, 3, self.heads, self.dim_head).transpose(1, 3)  # (B, H, 3, T, D)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]  # (B, H, T, D) each
        if self.rope is not None:
            q, k = self.rope(q, start), self.rope(k, start)
        keys[:, :, start:end] = k  # the new positions' keys and values into the preallocated cache
        values[:, :, start:end] = v
        a = F.scaled_dot_product_attention(
            q, keys[:, :, :end], values[:, :, :end], attn_mask=mask, is_causal=is_causal
        )  # (B, H, T, D)
        a = F.linear(a.transpose(1, 2).reshape(b, t, dim), wo, bo)  # (B, T, C)
        if pre:
            x = x + a
            return x + F.linear(self.act(F.linear(F.layer_norm(x, (dim,), g2, b2, e2), w1, bb1)), w2, bb2)
        x = F.layer_norm(x + a, (dim,), g1, b1, e1)
        return F.layer_norm(x + F.linear(self.act(F.linear(x, w1, bb1)), w2, bb2), (dim,), g2, b2, e2)

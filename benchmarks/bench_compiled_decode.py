"""Would a compiled decode step beat the fast decoder on this CPU? (issue 16, item 3)

    .venv/bin/python benchmarks/bench_compiled_decode.py [--tokens 250] [--repeats 3]

The model of the sampling benchmark (4 layers, 4 heads, d 128, context 256, pre-norm, GELU, tied
embeddings, batch 1). Three ways to decode one token at a time, alternating:
- ``fast``: the library's ``FastDecoder.step`` (eager, about a dozen tensor operations per block);
- ``static``: one function with static shapes for ``torch.compile``: the new key/value written into the
  preallocated cache at a position tensor, attention over the whole capacity with a mask of the
  positions filled so far (no shape changes from token to token, so no recompilation);
- ``compiled``: that function under ``torch.compile`` (inductor; needs a C++ compiler).
Checks that the static function gives the fast decoder's logits (within 1e-5), then prints one JSON
line per repeat with milliseconds per token, and the compile time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import torch
import torch.nn.functional as F

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.generation.fast_decode import FastDecoder

MACHINE = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"


def static_step(decoder: FastDecoder):  # noqa: ANN201
    """A decode step of fixed shapes over the decoder's own weights and cache (pre-norm models only)."""
    c = decoder.config
    heads, dim_head, capacity = decoder.heads, decoder.dim_head, c.max_length
    positions = torch.arange(capacity)
    final_w, final_b, final_eps = decoder.final
    head_w, head_b = decoder.head

    def step(ids: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        b = ids.shape[0]
        x = F.embedding(ids, decoder.embedding) + decoder.position.index_select(0, pos.view(1))  # (B, 1, C)
        filled = (positions <= pos).view(1, 1, 1, capacity)  # (1, 1, 1, L): keys written so far
        for weights in decoder.blocks:
            _, g1, b1, e1, wqkv, bqkv, wo, bo, g2, b2, e2, w1, bb1, w2, bb2, keys, values = weights
            h = F.layer_norm(x, (c.dim,), g1, b1, e1)
            qkv = F.linear(h, wqkv, bqkv).view(b, 1, 3, heads, dim_head).transpose(1, 3)  # (B, H, 3, 1, D)
            keys.index_copy_(2, pos.view(1), qkv[:, :, 1])  # (B, H, L, D) <- (B, H, 1, D) at pos
            values.index_copy_(2, pos.view(1), qkv[:, :, 2])
            a = F.scaled_dot_product_attention(qkv[:, :, 0], keys, values, attn_mask=filled)  # (B, H, 1, D)
            x = x + F.linear(a.transpose(1, 2).reshape(b, 1, c.dim), wo, bo)  # (B, 1, C)
            x = x + F.linear(decoder.act(F.linear(F.layer_norm(x, (c.dim,), g2, b2, e2), w1, bb1)), w2, bb2)
        return F.linear(F.layer_norm(x[:, -1], (c.dim,), final_w, final_b, final_eps), head_w, head_b)  # (B, V)

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=250)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    torch.manual_seed(0)
    config = GeneratorConfig(
        vocab_size=65, max_length=256, dim=128, n_heads=4, dim_hidden=512, n_blocks=4, dropout=0.0,
        activation="gelu", norm_first=True, final_norm=True, tie_embeddings=True, qkv_bias=True,
    )  # fmt: skip
    model = build_model(config).eval()
    decoder = FastDecoder(model, 1)
    step = static_step(decoder)
    compiled = torch.compile(step, dynamic=False)
    ids = torch.randint(0, 65, (1, args.tokens))  # (1, N) random tokens: the speed does not depend on them
    with torch.inference_mode():
        expected = [decoder.step(ids[:, t : t + 1]) for t in range(32)]
        decoder.cache.zero_()
        got = [step(ids[:, t : t + 1], torch.tensor(t)) for t in range(32)]
        worst = max(float((a - b).abs().max()) for a, b in zip(expected, got))
        if worst > 1e-5:
            raise SystemExit(f"the static step differs from the fast decoder by {worst}")
        start = time.perf_counter()
        for t in range(args.tokens):  # compiles, then warms every position once
            compiled(ids[:, t : t + 1], torch.tensor(t))
        compile_s = time.perf_counter() - start

        def per_token(fn) -> float:  # noqa: ANN001
            start = time.perf_counter()
            for t in range(args.tokens):
                fn(t)
            return (time.perf_counter() - start) / args.tokens * 1e3

        for _ in range(args.repeats):
            decoder.reset()
            fast = per_token(lambda t: decoder.step(ids[:, t : t + 1]))
            static = per_token(lambda t: step(ids[:, t : t + 1], torch.tensor(t)))
            comp = per_token(lambda t: compiled(ids[:, t : t + 1], torch.tensor(t)))
            print(
                json.dumps(
                    {
                        "benchmark": "compiled-decode",
                        "tokens": args.tokens,
                        "fast_ms_per_token": round(fast, 3),
                        "static_eager_ms_per_token": round(static, 3),
                        "compiled_ms_per_token": round(comp, 3),
                        "compile_and_warm_s": round(compile_s, 1),
                        "max_abs_diff": worst,
                        "machine": MACHINE,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()

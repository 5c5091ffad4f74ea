"""The project's generator against a plain reference GPT, side by side in one process, alternating.

    .venv/bin/python benchmarks/bench_vs_reference.py train        # tokens/s at three sizes (~6 minutes)
    .venv/bin/python benchmarks/bench_vs_reference.py sample       # sampling tokens/s at context 256
    .venv/bin/python benchmarks/bench_vs_reference.py memory       # peak resident memory, one process each
    .venv/bin/python benchmarks/bench_vs_reference.py train --nanogpt /tmp/nanoGPT   # the real nanoGPT
    python benchmarks/bench_vs_reference.py train --device cuda --bf16 --only d384 --batch 64   # on a GPU

The reference is ``reference_gpt.py`` (written for this benchmark in the style of the minimal GPTs),
or with ``--nanogpt DIR`` the ``model.py`` of a nanoGPT checkout in a scratch folder (never copied into
this repository). Both sides train the same shape (pre-norm, GELU, final LayerNorm, tied embeddings,
biases) on the same random batches: forward + cross-entropy + backward + clip 1.0 + AdamW. Blocks of
steps alternate between the two so that the machine's drift hits both alike; the ratio of medians
is what counts (absolute speeds differ between machines by 2x and more). One JSON line per result.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.generation.generate import generate
from transformers_lite.training.optim import make_optimizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import emit  # noqa: E402
from reference_gpt import RefConfig, ReferenceGPT  # noqa: E402

SIZES = {  # three sizes: layers, heads, dim, context, batch, dropout
    "d32": dict(n_layer=3, n_head=4, n_embd=32, block_size=64, batch=32, dropout=0.1),
    "d128": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch=12, dropout=0.0),
    "d384": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch=8, dropout=0.2),
}
VOCAB = 65


def reference(size: dict, nanogpt: str | None, device: str = "cpu"):  # noqa: ANN201
    cfg = {k: v for k, v in size.items() if k != "batch"}
    if nanogpt:
        spec = importlib.util.spec_from_file_location("nanogpt_model", Path(nanogpt) / "model.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = module.GPT(module.GPTConfig(vocab_size=VOCAB, bias=True, **cfg)).to(device)
        return model, model.configure_optimizers(0.1, 1e-3, (0.9, 0.99), torch.device(device).type)
    model = ReferenceGPT(RefConfig(vocab_size=VOCAB, bias=True, **cfg)).to(device)
    return model, model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))


def project(size: dict, device: str = "cpu", **overrides):  # noqa: ANN003, ANN201
    config = GeneratorConfig(
        vocab_size=VOCAB,
        max_length=size["block_size"],
        dim=size["n_embd"],
        n_heads=size["n_head"],
        dim_hidden=4 * size["n_embd"],
        n_blocks=size["n_layer"],
        dropout=size["dropout"],
        activation="gelu",
        norm_first=True,
        final_norm=True,
        tie_embeddings=True,
        qkv_bias=True,
        **overrides,
    )
    model = build_model(config).to(device)
    return model, make_optimizer(model, 1e-3, 0.1, (0.9, 0.99))


def train_block(model, optimizer, batches, is_reference: bool, bf16: bool = False) -> float:  # noqa: ANN001
    """Seconds for one optimizer step per batch (forward under bfloat16 autocast with ``bf16``)."""
    model.train()
    device = batches[0][0].device
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16)
    _synchronize(device)
    start = time.perf_counter()
    for x, y in batches:
        with autocast:
            if is_reference:
                _, loss = model(x, y)
            else:
                loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss.item()
    _synchronize(device)
    return time.perf_counter() - start


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _device_name(device: str) -> str:
    return torch.cuda.get_device_name(device) if device.startswith("cuda") else "cpu"


def train(  # noqa: PLR0913
    nanogpt: str | None,
    steps: int,
    repeats: int,
    only: list[str] | None,
    compiled: bool = False,
    *,
    device: str = "cpu",
    bf16: bool = False,
    batch: int | None = None,
    compile_reference: bool = False,
) -> None:
    for name, size in SIZES.items():
        if only and name not in only:
            continue
        size = dict(size, batch=batch or size["batch"])
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(1)
        data = torch.randint(0, VOCAB, (steps, size["batch"], size["block_size"] + 1), generator=g).to(device)
        batches = [(d[:, :-1].contiguous(), d[:, 1:].contiguous()) for d in data]
        ref, ref_opt = reference(size, nanogpt, device)
        ours, our_opt = project(size, device)
        compile_s = {}
        for side, on in (("project", compiled), ("reference", compile_reference)):
            if on:
                start = time.perf_counter()
                if side == "project":
                    ours = torch.compile(ours)
                    train_block(ours, our_opt, batches[:1], False, bf16)
                else:
                    ref = torch.compile(ref)
                    train_block(ref, ref_opt, batches[:1], True, bf16)
                compile_s[side] = round(time.perf_counter() - start, 1)
        train_block(ref, ref_opt, batches[:3], True, bf16)  # warm-up
        train_block(ours, our_opt, batches[:3], False, bf16)
        times: dict[str, list[float]] = {"reference": [], "project": []}
        for _ in range(repeats):
            times["reference"].append(train_block(ref, ref_opt, batches, True, bf16))
            times["project"].append(train_block(ours, our_opt, batches, False, bf16))
        tokens = steps * size["batch"] * size["block_size"]
        ref_rate, our_rate = (tokens / statistics.median(times[k]) for k in ("reference", "project"))
        emit(
            benchmark="train",
            size=name,
            **size,
            reference="nanoGPT" if nanogpt else "reference_gpt.py",
            project_path="torch.compile" if compiled else "eager",
            reference_path="torch.compile" if compile_reference else "eager",
            compile_s=compile_s or None,
            device=_device_name(device),
            precision="bf16 autocast" if bf16 else "float32",
            reference_tokens_per_s=round(ref_rate),
            project_tokens_per_s=round(our_rate),
            ratio=round(our_rate / ref_rate, 2),
        )


def _rate(fn, tokens: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return tokens / statistics.median(times)


def sample(nanogpt: str | None, repeats: int) -> None:
    """Sampling at context 256 (baby-gpt's shape): the reference (no cache, crops the context) against
    the project's two paths (KV cache, no cache), the default sliding window (stride 64); then batched sampling and the
    time to the first token."""
    size = dict(SIZES["d128"], block_size=256, dropout=0.0)
    torch.manual_seed(0)
    ref, _ = reference(size, nanogpt)
    ours, _ = project(size)
    ref.eval(), ours.eval()
    for prompt_len, new in ((1, 250), (256, 300)):
        prompt = torch.randint(0, VOCAB, (prompt_len,), generator=torch.Generator().manual_seed(2))
        rates = {"reference": _rate(lambda prompt=prompt, new=new: ref.generate(prompt[None], new), new, repeats)}
        for path in ("cache", "no-cache"):
            rates[path] = _rate(
                lambda prompt=prompt, new=new, path=path: list(generate(ours, prompt, new, seed=1, path=path)),
                new,
                repeats,
            )
        emit(
            benchmark="sample",
            prompt_tokens=prompt_len,
            new_tokens=new,
            context=256,
            reference="nanoGPT" if nanogpt else "reference_gpt.py",
            **{f"{k.replace('-', '_')}_tokens_per_s": round(v) for k, v in rates.items()},
            cache_vs_reference=round(rates["cache"] / rates["reference"], 2),
        )
    prompt = torch.tensor([1, 2, 3])
    one = _rate(lambda: list(generate(ours, prompt, 200, seed=1)), 200, repeats)
    many = _rate(lambda: list(generate(ours, prompt, 200, num_samples=16, seed=1)), 16 * 200, repeats)
    emit(
        benchmark="batched-sample",
        samples=16,
        new_tokens=200,
        one_at_a_time_tokens_per_s=round(one),
        sixteen_at_once_tokens_per_s=round(many),
        ratio=round(many / one, 2),
    )
    baby = build_model(
        GeneratorConfig(
            vocab_size=VOCAB,
            dim=128,
            n_heads=4,
            dim_hidden=512,
            n_blocks=4,
            max_length=64,
            norm_first=True,
            final_norm=True,
            activation="gelu",
            tie_embeddings=True,
            dropout=0.0,
        )
    ).eval()
    first = []
    for _ in range(max(repeats, 5)):
        start = time.perf_counter()
        next(generate(baby, torch.tensor([10, 20, 30, 40, 50, 60]), 100, seed=1))
        first.append(time.perf_counter() - start)
    emit(
        benchmark="time-to-first-token",
        model="baby-gpt",
        prompt_tokens=6,
        milliseconds=round(1000 * statistics.median(first), 2),
    )


def memory() -> None:
    """Peak resident memory of training 20 steps and of sampling 300 tokens, one fresh process each."""
    for what in ("train-d128", "train-d384", "sample-d128"):
        out = subprocess.run([sys.executable, __file__, "_memory", what], capture_output=True, text=True, check=True)
        emit(benchmark="memory", scenario=what, **json.loads(out.stdout))


def _memory(what: str) -> None:
    kind, size_name = what.split("-")
    size = dict(SIZES[size_name])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    model, opt = project(size)
    if kind == "train":
        data = torch.randint(0, VOCAB, (size["batch"], size["block_size"] + 1))
        train_block(model, opt, [(data[:, :-1], data[:, 1:])] * 20, False)
    else:
        model.eval()
        list(generate(model, torch.tensor([1]), 300))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_rss_mib": round(peak / 1024, 1), "before_model_mib": round(before / 1024, 1)}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("train", "sample", "memory", "_memory"))
    parser.add_argument("scenario", nargs="?")
    parser.add_argument("--nanogpt", help="a nanoGPT checkout in a scratch folder: measure its model.py instead")
    parser.add_argument("--steps", type=int, default=20, help="steps per alternating block")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", action="append", choices=tuple(SIZES))
    parser.add_argument("--compile", action="store_true", help="train: torch.compile the project's model")
    parser.add_argument("--compile-reference", action="store_true", help="train: torch.compile the reference too")
    parser.add_argument("--device", default="cpu", help="train: cpu, cuda, cuda:N")
    parser.add_argument("--bf16", action="store_true", help="train: both sides under bfloat16 autocast")
    parser.add_argument("--batch", type=int, help="train: rows per batch instead of the size's own")
    args = parser.parse_args()
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    if args.what == "train":
        train(
            args.nanogpt,
            args.steps,
            args.repeats,
            args.only,
            args.compile,
            device=args.device,
            bf16=args.bf16,
            batch=args.batch,
            compile_reference=args.compile_reference,
        )
    elif args.what == "sample":
        sample(args.nanogpt, args.repeats)
    elif args.what == "memory":
        memory()
    else:
        _memory(args.scenario)


if __name__ == "__main__":
    main()

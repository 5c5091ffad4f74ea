"""This checkout against another one (an earlier release), side by side: training and sampling speed.

    .venv/bin/python benchmarks/compare_versions.py --before /tmp/before            # a checkout of 0.2
    .venv/bin/python benchmarks/compare_versions.py --before /tmp/before --only sample

Each measurement runs in a fresh process that imports ``transformers_lite`` from one checkout's ``src``
(``--probe``, below), the two checkouts alternating round after round so the machine's drift hits both
alike; the ratio of medians is what counts. Training: the ``bench_vs_reference.py train`` step of the
project's GPT (forward, cross-entropy, backward, clip 1.0, AdamW) at three sizes. Sampling: the
``bench_vs_reference.py sample`` case (4 blocks, d 128, context 256: 250 tokens after a 1-token prompt,
300 after a 256-token prompt) on each checkout's default decoding path, with a hash of the tokens:
both must sample the same text. One JSON line per result.

``--only sample-one-process`` times the two releases' decoders in *one* process instead, alternating call by
call on the same model object (the earlier checkout's package is copied under another name and imported
beside this one; its decoder must run on today's model, as 0.2's ``path="fast"`` does). Separate processes
carry the start-up and the machine's drift between them; one process measures only the decoders.
``--only models-one-process`` also times each checkout's own model code in one process: each decodes its own
model (the same weights, copied: for a checkout whose parameter names are today's) with its own decoder,
and takes training steps on its own copy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import emit

HERE = Path(__file__).resolve()
SIZES = {  # layers, heads, dim, context, batch, dropout: bench_vs_reference.py's
    "d32": dict(n_layer=3, n_head=4, n_embd=32, block_size=64, batch=32, dropout=0.1),
    "d128": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch=12, dropout=0.0),
    "d384": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch=8, dropout=0.2),
}
VOCAB = 65


def gpt(size: dict):  # noqa: ANN201 - the checkout's model
    import transformers_lite as tl

    config = tl.GeneratorConfig(
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
    )
    return tl.build_model(config)


def probe_train(name: str, steps: int) -> dict:
    import torch
    import torch.nn.functional as F

    from transformers_lite.training.optim import make_optimizer

    size = SIZES[name]
    torch.manual_seed(0)
    data = torch.randint(0, VOCAB, (steps + 3, size["batch"], size["block_size"] + 1), generator=torch.Generator())
    model = gpt(size)
    optimizer = make_optimizer(model, 1e-3, 0.1, (0.9, 0.99))
    model.train()
    for i, d in enumerate(data):
        if i == 3:  # three warm-up steps
            start = time.perf_counter()
        loss = F.cross_entropy(model(d[:, :-1]).flatten(0, 1), d[:, 1:].flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss.item()
    return {"tokens_per_s": steps * size["batch"] * size["block_size"] / (time.perf_counter() - start)}


def probe_sample(prompt_len: int, new: int, repeats: int) -> dict:
    import torch

    from transformers_lite.generation import generate as gen

    path = "cache" if "cache" in gen.PATHS else "fast"  # each checkout's default cached path
    size = dict(SIZES["d128"], block_size=256, dropout=0.0)
    torch.manual_seed(0)
    model = gpt(size).eval()
    prompt = torch.randint(0, VOCAB, (prompt_len,), generator=torch.Generator().manual_seed(2))
    tokens = list(gen.generate(model, prompt, new, seed=1, path=path))  # warm-up, and the text
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        list(gen.generate(model, prompt, new, seed=1, path=path))
        times.append(time.perf_counter() - start)
    digest = hashlib.sha1(json.dumps(tokens).encode()).hexdigest()[:12]
    return {"tokens_per_s": new / statistics.median(times), "tokens_sha1": digest, "path": path}


PROBES = {
    **{f"train-{name}": (lambda name=name: probe_train(name, 30 if name != "d384" else 6)) for name in SIZES},
    "sample-1": lambda: probe_sample(1, 250, 3),
    "sample-256": lambda: probe_sample(256, 300, 3),
}


def alternated(runs: dict, rounds: int) -> dict[str, float]:
    """The median seconds of ``runs["before"]()`` and ``runs["after"]()`` over ``rounds`` of each, ABBA: which
    one runs second (its caches warmed or spoilt by the other) alternates too."""
    times: dict[str, list[float]] = {"before": [], "after": []}
    for i in range(rounds):
        for name in ("before", "after") if i % 2 else ("after", "before"):
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def one_process(before: Path, rounds: int) -> None:
    """Both checkouts' default cached decoding, alternating in this process on one model: the same tokens,
    median tokens/s of each over ``rounds`` alternations per case."""
    import shutil
    import tempfile

    import torch

    from transformers_lite.generation import generate as now

    with tempfile.TemporaryDirectory() as folder:
        shutil.copytree(before / "src" / "transformers_lite", Path(folder) / "before_tl")
        sys.path.insert(0, folder)
        from before_tl.generation import generate as then  # type: ignore[import-not-found]

        path = "cache" if "cache" in then.PATHS else "fast"
        torch.manual_seed(0)
        model = gpt(dict(SIZES["d128"], block_size=256, dropout=0.0)).eval()
        for prompt_len, new in ((1, 250), (256, 300)):
            prompt = torch.randint(0, VOCAB, (prompt_len,), generator=torch.Generator().manual_seed(2))
            runs = {
                "before": lambda p=prompt, n=new: list(then.generate(model, p, n, seed=1, path=path)),
                "after": lambda p=prompt, n=new: list(now.generate(model, p, n, seed=1)),
            }
            same = runs["before"]() == runs["after"]()  # also the warm-up
            rates = {k: new / t for k, t in alternated(runs, rounds).items()}
            emit(
                benchmark="compare-versions",
                case=f"sample-{prompt_len}, one process",
                before_tokens_per_s=round(rates["before"]),
                after_tokens_per_s=round(rates["after"]),
                after_vs_before=round(rates["after"] / rates["before"], 3),
                rounds=rounds,
                same_tokens=same,
                paths=f"{path} -> cache",
            )


def one_process_models(before: Path, rounds: int) -> None:
    """Both checkouts in this process, alternating call by call: each builds its own model (the same
    weights: the earlier one's are copied from today's, so their parameter names must agree) and decodes
    it with its own default cached path (the same tokens), and each takes training steps on its own copy
    (forward, loss, backward, AdamW); median tokens/s of each over ``rounds`` alternations per case."""
    import shutil
    import tempfile

    import torch
    import torch.nn.functional as F

    from transformers_lite.generation import generate as now

    with tempfile.TemporaryDirectory() as folder:
        shutil.copytree(before / "src" / "transformers_lite", Path(folder) / "before_tl")
        sys.path.insert(0, folder)
        import before_tl  # type: ignore[import-not-found]
        from before_tl.generation import generate as then  # type: ignore[import-not-found]

        path = "cache" if "cache" in then.PATHS else "fast"
        size = dict(SIZES["d128"], block_size=256, dropout=0.0)
        torch.manual_seed(0)
        models = {"after": gpt(size).eval()}
        config = before_tl.GeneratorConfig(
            **{
                k: v
                for k, v in models["after"].config.to_dict().items()
                if k != "family" and k in before_tl.GeneratorConfig.__dataclass_fields__
            }
        )
        models["before"] = before_tl.build_model(config).eval()
        models["before"].load_state_dict(models["after"].state_dict())
        decoders = {
            "before": lambda m, p, n: then.generate(m, p, n, seed=1, path=path),
            "after": lambda m, p, n: now.generate(m, p, n, seed=1),
        }
        cases: list[tuple[str, int, dict]] = []
        for prompt_len, new in ((1, 250), (256, 300)):
            prompt = torch.randint(0, VOCAB, (prompt_len,), generator=torch.Generator().manual_seed(2))
            runs = {k: (lambda k=k, p=prompt, n=new: list(decoders[k](models[k], p, n))) for k in models}
            cases.append((f"sample-{prompt_len}, one process", new, runs))
        batch = torch.randint(0, VOCAB, (12, 65), generator=torch.Generator().manual_seed(3))
        trained = {}
        for k, m in models.items():  # a copy of each to train (dropout 0: the same arithmetic in both)
            trained[k] = type(m)(m.config)
            trained[k].load_state_dict(m.state_dict())
            trained[k].train()
        optimizers = {k: torch.optim.AdamW(m.parameters(), 1e-3) for k, m in trained.items()}

        def step(k: str) -> None:
            m = trained[k]
            loss = F.cross_entropy(m(batch[:, :-1]).flatten(0, 1), batch[:, 1:].flatten())
            loss.backward()
            optimizers[k].step()
            optimizers[k].zero_grad(set_to_none=True)

        cases.append(("train-d128 (context 64), one process", 12 * 64, {k: (lambda k=k: step(k)) for k in trained}))
        token_step(models, rounds)
        for case, tokens, runs in cases:
            same = runs["before"]() == runs["after"]()  # also the warm-up
            rates = {k: tokens / t for k, t in alternated(runs, rounds).items()}
            emit(
                benchmark="compare-versions",
                case=case,
                before_tokens_per_s=round(rates["before"]),
                after_tokens_per_s=round(rates["after"]),
                after_vs_before=round(rates["after"] / rates["before"], 3),
                rounds=rounds,
                **({"same_tokens": same, "paths": f"{path} -> cache"} if case.startswith("sample") else {}),
            )


def token_step(models: dict, rounds: int) -> None:
    """One decoding step of each model (the token after 20 cached, through its own forward), the two
    alternating call by call, ABBA, ``rounds`` x 100 pairs: the median time of each, per token."""
    import torch

    ids = torch.tensor([[5]])
    weights = {k: m.weights(detach=True) for k, m in models.items()}
    caches = {k: m.new_cache(1) for k, m in models.items()}

    def one(k: str) -> float:
        caches[k].length = 20
        start = time.perf_counter()
        models[k].run(weights[k], ids, cache=caches[k], last_only=True)
        return time.perf_counter() - start

    with torch.no_grad():
        for _ in range(50):
            one("before"), one("after")
        times: dict[str, list[float]] = {"before": [], "after": []}
        for i in range(rounds * 100):
            for name in ("before", "after") if i % 2 else ("after", "before"):
                times[name].append(one(name))
    rates = {k: 1 / statistics.median(v) for k, v in times.items()}
    emit(
        benchmark="compare-versions",
        case="one decoding step (the model's forward with a KV cache), one process",
        before_tokens_per_s=round(rates["before"]),
        after_tokens_per_s=round(rates["after"]),
        after_vs_before=round(rates["after"] / rates["before"], 3),
        pairs=rounds * 100,
    )


def run_probe(checkout: Path, probe: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    out = subprocess.run(
        [sys.executable, str(HERE), "--probe", probe], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="a checkout of the earlier version (its src/ is imported)")
    parser.add_argument("--rounds", type=int, default=5, help="alternations per measurement (default: 5)")
    parser.add_argument(
        "--only",
        nargs="*",
        choices=("train", "sample", "sample-one-process", "models-one-process"),
        help="measure only these",
    )
    parser.add_argument("--probe", choices=sorted(PROBES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(PROBES[args.probe]()))
        return
    if args.before is None:
        parser.error("--before DIR is required")
    after = HERE.parents[1]
    if args.only and "sample-one-process" in args.only:
        one_process(args.before, args.rounds)
    if args.only and "models-one-process" in args.only:
        one_process_models(args.before, args.rounds)
    for probe in PROBES:
        if args.only and probe.split("-")[0] not in args.only:
            continue
        results: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            results["before"].append(run_probe(args.before, probe))
            results["after"].append(run_probe(after, probe))
        rates = {k: statistics.median(r["tokens_per_s"] for r in v) for k, v in results.items()}
        row = {
            "benchmark": "compare-versions",
            "case": probe,
            "before_tokens_per_s": round(rates["before"]),
            "after_tokens_per_s": round(rates["after"]),
            "after_vs_before": round(rates["after"] / rates["before"], 3),
            "rounds": args.rounds,
        }
        if "tokens_sha1" in results["after"][0]:
            row["same_tokens"] = results["before"][0]["tokens_sha1"] == results["after"][0]["tokens_sha1"]
            row["paths"] = f"{results['before'][0]['path']} -> {results['after'][0]['path']}"
        emit(**row)


if __name__ == "__main__":
    main()

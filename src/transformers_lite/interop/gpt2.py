"""GPT-2 checkpoints in and out: a Hugging Face GPT-2 directory <-> a transformers-lite generator run.

A GPT-2 is this project's character GPT with a few switches set: pre-norm blocks, a final
LayerNorm, biases on every Dense (Q/K/V too), tanh-approximated GELU, learned positions, tied
embeddings, an output Dense without bias, LayerNorm epsilon 1e-5. Hugging Face stores its Dense
layers as ``Conv1D`` (``y = x W + b``, ``W (in, out)``); ours are ``nn.Linear`` (``y = x Wᵀ + b``, ``W
(out, in)``), so every such matrix is transposed on the way in and out. Q, K and V sit in one
``c_attn`` matrix in the same ``[Q; K; V]`` order as our ``qkv``.

Only safetensors are read: pickled ``pytorch_model.bin`` files can run code when loaded.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import torch

from ..atomic import atomic_write_json, atomic_write_text, read_json
from ..config import GeneratorConfig
from ..errors import ConfigError, DataError, RunError
from ..layers import ACTIVATIONS as NONLINEARITIES
from ..layers import activation, attention_class, feed_forward_class
from ..models import build_model
from ..optional import need
from ..runs import load, read_tensors, save_tensors, save_weights
from ..runs.files import FORMAT, load_model_tensors
from ..runs.manifest import MANIFEST, record
from ..tokenizers import ByteLevelBPETokenizer
from .folders import check_output_folder


def hf_activations() -> dict[str, str]:
    """Hugging Face's ``activation_function`` names this package reads, each to its nonlinearity (from the
    one table of nonlinearities, ``layers.activations``: a new one with a Hugging Face name converts)."""
    return {hf: a.name for a in NONLINEARITIES.values() if a.hf for hf in (a.hf, *a.hf_aliases)}


LINEARS = {
    "attn.c_attn": "attention.qkv",
    "attn.c_proj": "attention.out",
    "mlp.c_fc": "feed_forward.dense1",
    "mlp.c_proj": "feed_forward.dense2",
}
NORMS = {"ln_1": "attention_residual.norm", "ln_2": "feed_forward_residual.norm"}


def tensor_names(n_blocks: int) -> list[tuple[str, str, bool]]:
    """``(GPT-2's name, this package's name, transposed)`` for every tensor of the body; GPT-2 stores its
    linear layers as ``Conv1D`` matrices, ``(in, out)``, the transpose of ``nn.Linear``'s ``(out, in)``."""
    pairs = [
        ("wte.weight", "embedding.weight", False),
        ("wpe.weight", "position_embedding.weight", False),
        ("ln_f.weight", "final_norm.weight", False),
        ("ln_f.bias", "final_norm.bias", False),
    ]
    for i in range(n_blocks):
        for theirs, ours in {**LINEARS, **NORMS}.items():
            pairs.append((f"h.{i}.{theirs}.weight", f"blocks.{i}.{ours}.weight", theirs in LINEARS))
            pairs.append((f"h.{i}.{theirs}.bias", f"blocks.{i}.{ours}.bias", False))
    return pairs


def config_from_gpt2(hf: dict[str, Any], origin: object = "config.json") -> GeneratorConfig:
    """The generator config of a Hugging Face GPT-2 ``config.json`` (refusing what GPT-2 variants add)."""
    if hf.get("model_type") != "gpt2":
        raise DataError(f"{origin}: model_type {hf.get('model_type')!r} is not gpt2; only GPT-2 checkpoints convert")
    unsupported = [
        k
        for k, bad in (
            ("scale_attn_weights", False),
            ("scale_attn_by_inverse_layer_idx", True),
            ("add_cross_attention", True),
        )
        if hf.get(k, not bad) == bad
    ]
    if unsupported:
        raise DataError(f"{origin}: {', '.join(unsupported)} is not supported")
    act, known = hf.get("activation_function", "gelu_new"), hf_activations()
    if act not in known:
        raise DataError(f"{origin}: activation {act!r} is not supported (use one of {', '.join(known)})")
    if lacking := [name for name in REQUIRED if name not in hf]:
        raise DataError(f"{origin}: no {', '.join(lacking)}; a GPT-2 config.json gives {', '.join(REQUIRED)}")
    try:
        return GeneratorConfig(
            vocab_size=hf["vocab_size"],
            max_length=hf["n_positions"],
            dim=hf["n_embd"],
            n_heads=hf["n_head"],
            dim_hidden=hf.get("n_inner") or _times4(hf["n_embd"]),
            n_blocks=hf["n_layer"],
            dropout=hf.get("resid_pdrop", 0.1),
            activation=known[act],
            norm_first=True,
            final_norm=True,
            qkv_bias=True,
            tie_embeddings=hf.get("tie_word_embeddings", True),
            head_bias=False,
            norm_eps=hf.get("layer_norm_epsilon", 1e-5),
        )
    except ConfigError as err:  # named as the file names it: "n_embd", not our "dim"
        text = str(err)
        for ours, theirs in GPT2_NAMES.items():
            if text.startswith(f"{ours} "):
                text = theirs + text[len(ours) :]
        raise DataError(f"{origin}: {text}") from None


REQUIRED = ("vocab_size", "n_positions", "n_embd", "n_head", "n_layer")
GPT2_NAMES = {  # our config field -> GPT-2's config.json key
    "vocab_size": "vocab_size",
    "max_length": "n_positions",
    "dim_hidden": "n_inner",
    "dim": "n_embd",
    "n_heads": "n_head",
    "n_blocks": "n_layer",
    "dropout": "resid_pdrop",
    "tie_embeddings": "tie_word_embeddings",
    "norm_eps": "layer_norm_epsilon",
}


def _times4(value: Any) -> Any:  # noqa: ANN401 - n_embd as the file gives it: checked by the config
    return 4 * value if isinstance(value, int) and not isinstance(value, bool) else value


def _read_hf_weights(folder: Path) -> dict[str, torch.Tensor]:
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.is_file():
        tensors = read_tensors(single)
    elif index.is_file():
        weight_map = read_json(index, "index of the weight files", DataError)
        weight_map = weight_map.get("weight_map") if isinstance(weight_map, dict) else None
        if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
            raise DataError(f'{index}: no "weight_map" of tensor name -> file; save the model again')
        shards = sorted(set(weight_map.values()))
        tensors = {k: v for shard in shards for k, v in read_tensors(folder / shard).items()}
    elif (folder / "pytorch_model.bin").is_file():
        raise DataError(
            f"{folder} holds only pickled weights (pytorch_model.bin), which can run code when loaded; "
            "save them as safetensors first: model.save_pretrained(dir, safe_serialization=True)"
        )
    else:
        raise FileNotFoundError(f"{folder}: no model.safetensors")
    return {k.removeprefix("transformer."): v for k, v in tensors.items()}


def state_from_gpt2(
    hf: dict[str, torch.Tensor], config: GeneratorConfig, shapes: dict[str, torch.Size], origin: object
) -> dict[str, torch.Tensor]:
    """Hugging Face GPT-2 tensors -> this package's generator state dict (Conv1D matrices transposed).
    The tensors must be exactly those ``config.json`` describes, each of the shape in ``shapes`` (the
    model built from it): a missing tensor, one the config does not describe (a layer beyond
    ``n_layer``) or a shape that disagrees is a ``DataError`` naming the tensor and the config."""
    pairs = tensor_names(config.n_blocks) + (
        [] if config.tie_embeddings else [("lm_head.weight", "head.weight", False)]
    )
    said = f"config.json: n_layer={config.n_blocks}, n_embd={config.dim}, n_inner={config.dim_hidden}, "
    said += (
        f"vocab_size={config.vocab_size}, n_positions={config.max_length}, tie_word_embeddings={config.tie_embeddings}"
    )
    if missing := [theirs for theirs, _, _ in pairs if theirs not in hf]:
        raise DataError(f"{origin}: no tensor {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} ({said})")
    known = {theirs for theirs, _, _ in pairs} | {"lm_head.weight"}  # GPT-2 files may hold the tied head too
    extra = sorted(k for k in hf if k not in known and not k.endswith((".attn.bias", ".attn.masked_bias")))
    if extra:  # the causal-mask buffers (attn.bias) of older files are not weights
        raise DataError(f"{origin}: tensors the config does not describe: {', '.join(extra[:3])} ({said})")
    out = {}
    for theirs, ours, transposed in pairs:
        tensor = hf[theirs].T.contiguous() if transposed else hf[theirs]
        if tensor.shape != shapes[ours]:
            wanted = tuple(shapes[ours][::-1] if transposed else shapes[ours])
            raise DataError(
                f"{origin}: {theirs} has shape {tuple(hf[theirs].shape)}, the config gives {wanted} ({said})"
            )
        out[ours] = tensor
    return out


def _read_hf_tokenizer(hf_dir: Path) -> ByteLevelBPETokenizer:
    """GPT-2's tokenizer in either layout ``save_pretrained`` writes: ``vocab.json`` + ``merges.txt``
    (older ``transformers``, slow tokenizers) or ``tokenizer.json`` (current fast tokenizers)."""
    if (hf_dir / "vocab.json").is_file() and (hf_dir / "merges.txt").is_file():
        return ByteLevelBPETokenizer.from_files(hf_dir / "vocab.json", hf_dir / "merges.txt")
    if (hf_dir / "tokenizer.json").is_file():
        return ByteLevelBPETokenizer.from_hf_json(hf_dir / "tokenizer.json")
    raise FileNotFoundError(f"{hf_dir}: no tokenizer.json and no vocab.json + merges.txt (GPT-2's byte-level BPE)")


def import_gpt2(hf_dir: str | Path, out: str | Path, force: bool = False) -> Path:
    """Convert a Hugging Face GPT-2 directory into a run directory that every ``tlite`` command reads
    (``out`` must not hold a run nor, unless ``force``, other files: ``check_output_folder``)."""
    hf_dir, out = Path(hf_dir), check_output_folder(out, source=hf_dir, force=force)
    config_path = hf_dir / "config.json"
    if not config_path.is_file():
        raise FileNotFoundError(
            f"{hf_dir}: no config.json (a Hugging Face model directory holds config.json and model.safetensors)"
        )
    hf = read_json(config_path, "Hugging Face config", DataError)
    if not isinstance(hf, dict):
        raise DataError(f"{config_path}: a JSON {type(hf).__name__}, not a config object of GPT-2's settings")
    config = config_from_gpt2(hf, config_path)
    model = build_model(config)
    shapes = {name: t.shape for name, t in model.state_dict().items()}
    state = state_from_gpt2(_read_hf_weights(hf_dir), config, shapes, hf_dir / "model.safetensors")
    missing, unexpected = load_model_tensors(model, state)
    if missing:
        raise DataError(f"{hf_dir}: tensors missing for {', '.join(missing[:3])}")
    tokenizer = _read_hf_tokenizer(hf_dir)  # before writing anything
    out.mkdir(parents=True, exist_ok=True)
    save_weights(model, out / "model.safetensors")
    config.to_json(out / "config.json")
    tokenizer.save(out / "tokenizer.json")
    atomic_write_json(
        out / "hyperparameters.json",
        {
            "format": FORMAT,
            "task": "generator",
            "manifest": MANIFEST,
            "imported_from": str(hf_dir.resolve()),
            "model": config.to_dict(),
            "data": {},
        },
    )
    # loading checks them (runs/manifest.py)
    record(out, ["hyperparameters.json", "config.json", "tokenizer.json", "model.safetensors"])
    return out


# settings GPT-2 lacks that do not change what the exported model computes: the initialisation and dropout
# rate are training's, and Dense layers without a bias export as zero biases
SAME_COMPUTATION = ("init", "zero_init", "dropout", "qkv_bias", "bias")
WHY_NOT = {  # the settings GPT-2 lacks most often, in words
    "norm_first": "post-norm blocks (GPT-2 is pre-norm)",
    "final_norm": "no final LayerNorm",
    "position": "rotary positions (GPT-2 learns them)",
    "head_bias": "a bias on the output Dense (GPT-2 has none)",
}


def _why_not(c: GeneratorConfig, field: str, as_gpt2: GeneratorConfig) -> str:
    """One line saying what ``c`` has that GPT-2 lacks: the layer variant's or nonlinearity's own words."""
    if field == "ffn":
        return feed_forward_class(c.ffn).about
    if field == "kv_heads":
        return f"{attention_class(c.block().attention).about}: {c.kv_heads} key/value heads for {c.n_heads} heads"
    if field == "activation" and activation(c.activation).hf is None:
        return f"the activation {activation(c.activation).written} (GPT-2 in Hugging Face has no such activation)"
    return WHY_NOT.get(field, f"{field}={getattr(c, field)!r} (GPT-2: {getattr(as_gpt2, field)!r})")


def gpt2_differences(c: GeneratorConfig) -> list[str]:
    """Every setting of ``c`` that GPT-2 lacks, in words: those whose value differs from what GPT-2 would
    rebuild from an export of it (so a new model option is refused until it maps onto GPT-2)."""
    as_gpt2 = config_from_gpt2(_hf_config(c, None))
    return [_why_not(c, f, as_gpt2) for f in _differing(c, as_gpt2)]


def _differing(c: GeneratorConfig, as_gpt2: GeneratorConfig) -> list[str]:
    return [
        f.name for f in fields(c) if f.name not in SAME_COMPUTATION and getattr(c, f.name) != getattr(as_gpt2, f.name)
    ]


def gpt2_settings(c: GeneratorConfig) -> list[str]:
    """The ``KEY=VALUE`` settings (``tlite train generator --set``) that make a model of ``c``'s size
    GPT-2-shaped: GPT-2's value of every setting ``gpt2_differences`` names. They change what the
    blocks compute, so a trained model's weights do not carry over: the model is trained with them."""
    as_gpt2 = config_from_gpt2(_hf_config(c, None))

    def shown(value: Any) -> str:  # noqa: ANN401 - a config field's value, as --set reads it
        return json.dumps(value) if isinstance(value, bool) or value is None else str(value)

    return [f"{f}={shown(getattr(as_gpt2, f))}" for f in _differing(c, as_gpt2)]


def _hf_config(c: GeneratorConfig, tok: Any) -> dict[str, Any]:  # noqa: ANN401 - the run's tokenizer
    """The Hugging Face ``config.json`` of a GPT-2 with ``c``'s shape."""
    end = tok.eos_id if isinstance(tok, ByteLevelBPETokenizer) else None
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": c.vocab_size,
        "n_positions": c.max_length,
        "n_embd": c.dim,
        "n_layer": c.n_blocks,
        "n_head": c.n_heads,
        "n_inner": c.dim_hidden,
        # a nonlinearity without a Hugging Face name is written as GPT-2's own, so the export is refused naming it
        "activation_function": activation(c.activation).hf or "gelu_new",
        "resid_pdrop": c.dropout,
        "embd_pdrop": c.dropout,
        "attn_pdrop": 0.0,
        "layer_norm_epsilon": c.norm_eps,
        "tie_word_embeddings": c.tie_embeddings,
        "bos_token_id": end,
        "eos_token_id": end,
        "scale_attn_weights": True,
        "exported_from": "transformers-lite",
    }


def export_gpt2(run_dir: str | Path, out: str | Path, force: bool = False) -> Path:
    """Write a GPT-2-shaped generator run as a Hugging Face GPT-2 directory (``transformers`` loads it).
    ``out`` may not be the run or inside it, nor hold a run; a folder with other files is refused
    unless ``force`` (then the export's files replace theirs)."""
    out = check_output_folder(out, source=run_dir, force=force)  # before loading: a refusal costs nothing
    run = load(run_dir)
    c = run.config
    if not isinstance(c, GeneratorConfig):
        raise RunError(f"{run_dir} holds a {c.family} model; only generators export as GPT-2")
    hf_config = _hf_config(c, run.tokenizer)
    if problems := gpt2_differences(c):
        flags = " ".join(f"--set {setting}" for setting in gpt2_settings(c))
        raise RunError(
            f"{run_dir} is not GPT-2-shaped: {'; '.join(problems)}. GPT-2's blocks compute something else with "
            f"these settings, so no conversion of the trained weights gives the same model; a generator "
            f"trained with `tlite train generator ... {flags}` (any preset, any size) exports"
        )
    state = {k: v.detach() for k, v in run.model.state_dict().items()}
    tensors = {}
    for theirs, ours, transposed in tensor_names(c.n_blocks):
        if ours not in state:  # a model without biases exports zeros: GPT-2 always has them
            ours = ours.removesuffix(".bias") + ".weight"
            tensors[theirs] = torch.zeros(state[ours].shape[0])
        else:
            tensors[theirs] = state[ours].T if transposed else state[ours]
    tensors = {f"transformer.{k}": v.contiguous() for k, v in tensors.items()}
    if not c.tie_embeddings:
        tensors["lm_head.weight"] = state["head.weight"].contiguous()
    created = not out.exists()
    before = set() if created else set(out.iterdir())
    out.mkdir(parents=True, exist_ok=True)
    try:  # a write that fails (a full disk: one line naming the file) leaves no part of the export behind
        save_tensors(tensors, out / "model.safetensors", metadata={"format": "pt"})
        atomic_write_json(out / "config.json", hf_config)
        tok = run.tokenizer
        if isinstance(tok, ByteLevelBPETokenizer):
            vocab, merges = tok.vocab_and_merges()
            atomic_write_json(out / "vocab.json", vocab)
            atomic_write_text(out / "merges.txt", "#version: 0.2\n" + "".join(m + "\n" for m in merges))
    except BaseException:
        for path in set(out.iterdir()) - before:
            path.unlink()
        if created:
            out.rmdir()
        raise
    return out


HUB_FILES = ["config.json", "model.safetensors", "vocab.json", "merges.txt", "tokenizer.json"]


def download_gpt2(name: str) -> Path:
    """Fetch a GPT-2 model (``gpt2``, ``openai-community/gpt2-medium``, ...) from the Hugging Face Hub
    into its local cache with ``huggingface_hub`` and return the folder; only the files the import reads
    are downloaded (never pickled weights)."""
    hub = need("huggingface_hub", "hf", "downloading from the Hugging Face Hub")
    try:
        return Path(hub.snapshot_download(repo_id=name, allow_patterns=HUB_FILES))
    except Exception as err:  # noqa: BLE001 - offline, unknown repository, gated model: one line either way
        why = f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"
        raise DataError(
            f"could not download {name!r} from the Hugging Face Hub ({why}); "
            "without a network, download it elsewhere and import the folder"
        ) from None

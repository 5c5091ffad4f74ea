"""``tlite import-hf HF_DIR OUT_RUN`` and ``tlite export-hf RUN OUT_DIR``: GPT-2 checkpoints in and out."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from ..errors import ConfigError
from ..interop.folders import check_output_folder
from ..interop.gpt2 import download_gpt2, export_gpt2, import_gpt2
from .common import command

HELP = {
    "import-hf": """Read a Hugging Face GPT-2 directory into a run.

    Convert a GPT-2 directory (config.json, model.safetensors, and tokenizer.json or vocab.json + merges.txt)
    into a run that every tlite command reads. Pickled pytorch_model.bin weights are refused. A Hub name (gpt2,
    openai-community/gpt2-medium) that is not a local folder is downloaded (huggingface_hub).

        tlite import-hf ./gpt2 outputs/gpt2 && tlite generate outputs/gpt2 --prompt 'Hello'
    """,
    "export-hf": """Write a GPT-2-shaped generator run as a Hugging Face GPT-2 directory.

    Write config.json, model.safetensors (and vocab.json/merges.txt for byte-level BPE runs) that transformers'
    GPT2LMHeadModel.from_pretrained loads with the same logits.

        tlite export-hf outputs/gpt2 ./gpt2-copy
    """,
}  # each command's help text, as a command module's docstring is


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, inspect.cleandoc(HELP[name]))
    p.add_argument("source", help="Hugging Face directory" if name == "import-hf" else "run directory")
    p.add_argument("out", help="run directory to create" if name == "import-hf" else "directory to write")
    p.add_argument(
        "--force",
        action="store_true",
        help="write into OUT even if it holds other files (never into a run, nor into or inside the source)",
    )
    p.set_defaults(func=run_import if name == "import-hf" else run_export)


def run_import(args: argparse.Namespace) -> int:
    source = Path(args.source)
    check_output_folder(args.out, source if source.exists() else None, args.force)  # before any download
    if not source.exists():
        if args.source.startswith((".", "/", "~")) or args.source.count("/") > 1:
            raise ConfigError(f"{source} does not exist (give a Hugging Face GPT-2 folder or a Hub name like gpt2)")
        print(f"{source} is not a folder here: fetching {args.source!r} from the Hugging Face Hub")
        source = download_gpt2(args.source)
    print(f"imported {import_gpt2(source, args.out, force=args.force)}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    print(f"exported {export_gpt2(args.source, args.out, force=args.force)}")
    return 0

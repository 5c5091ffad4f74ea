"""The generator on a folder of files with a byte-level BPE: trained, evaluated, generating, inspected per token."""

import math

import pytest

import transformers_lite as tl
from transformers_lite import GeneratorConfig
from transformers_lite.evaluation.evaluate import evaluate_generator
from transformers_lite.tasks.generator import GeneratorSettings

from ..helpers import train_run

CODE = "".join(f"def square_{i}(x):\n    return x * x + {i}\n\n" for i in range(300))


def test_a_folder_of_code_with_a_byte_level_bpe(tmp_path):
    folder = tmp_path / "code"
    folder.mkdir()
    for part in range(3):
        (folder / f"part{part}.py").write_text(CODE[part * 3000 : (part + 1) * 3000])
    config = GeneratorConfig(dim=16, n_heads=2, dim_hidden=32, n_blocks=1, max_length=16)
    settings = GeneratorSettings(text=str(folder), tokenizer="bpe", vocab_size=300, batch_size=4)
    train_run(config, settings, tmp_path / "run", max_steps=3, warmup_steps=1)
    run = tl.load(tmp_path / "run")
    assert run.tokenizer.kind == "byte-bpe" and run.config.vocab_size == 300
    text = CODE[:3000]
    assert run.tokenizer.decode(run.tokenizer.encode(text)) == text  # byte-level: every text comes back
    assert len(run.tokenizer.encode(text)) < len(text) / 2  # merges learned on the corpus: few tokens per character
    recorded = run.hyperparameters["data"]
    assert recorded["files"] == 3 and recorded["tokenizer"] == "bpe"
    scores = evaluate_generator(run)  # the recorded folder's validation split, checked by its sha256
    assert scores["n_tokens"] > 0 and scores["uniform_perplexity"] == 300
    # per character of the decoded text: several characters per token, so fewer bits per character than per token
    assert scores["n_chars"] > scores["n_tokens"] and scores["n_bytes"] == scores["n_chars"]  # ASCII code
    bits = scores["loss"] * scores["n_tokens"] / math.log(2) / scores["n_chars"]
    assert scores["bits_per_char"] == pytest.approx(bits) and scores["bits_per_char"] < scores["loss"] / math.log(2)
    assert scores["unigram_loss"] < scores["uniform_loss"]  # knowing the frequencies beats a uniform guess
    assert run.tokenizer.shown(run.tokenizer.encode(" return")[0]) == " return"  # read as text, not "Ġreturn"
    assert isinstance(run.generate("def", max_new_tokens=5, temperature=0), str)


def test_the_metrics_a_generator_declares_are_the_ones_it_reports(tmp_path):
    from transformers_lite import build_model
    from transformers_lite.tasks.generator import GeneratorTask

    text = tmp_path / "t.txt"
    text.write_text("to be or not to be, that is the question\n" * 20)
    small = GeneratorConfig(max_length=8, dim=8, n_heads=2, dim_hidden=16, n_blocks=1)
    task = GeneratorTask.prepare(GeneratorSettings(text=str(text), batch_size=2), small, seed=0)
    cfg = task.model_config(small)
    assert set(task.metrics) == set(task.evaluate(build_model(cfg)))  # what --best-metric may name

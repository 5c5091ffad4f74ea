"""Runs written by transformers-lite 0.1 (commit 5aaa26d, tests/fixtures/legacy_runs) still load and
give the outputs they gave then; resuming one is refused with a clear message."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import transformers_lite as tl
from transformers_lite.evaluation.prediction import classify_texts
from transformers_lite.generation.translate import translate_texts

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "legacy_runs"
REFERENCE = json.loads((RUNS / "reference.json").read_text())


def test_generator_logits_are_unchanged():
    run = tl.load(RUNS / "generator")
    ref = REFERENCE["generator"]
    assert run.config.max_length == 8 and run.config.tie_embeddings  # renamed fields
    ids = torch.tensor([run.tokenizer.encode(ref["text"])])
    assert torch.allclose(run.model(ids)[0], torch.tensor(ref["logits"]), atol=1e-5)


@pytest.mark.parametrize("name", ["classifier", "seed-classifier"])
def test_classifier_probabilities_are_unchanged(name):
    run = tl.load(RUNS / name)
    ref = REFERENCE[name]
    assert run.tokenizer.kind == "word" and run.tokenizer.split == "words"
    probs = classify_texts(run.model, run.tokenizer, ref["texts"])
    assert torch.allclose(torch.tensor(probs), torch.tensor(ref["probs"]), atol=1e-5)


@pytest.mark.parametrize("name", ["seq2seq-word", "seq2seq-bpe"])
def test_translator_logits_and_translations_are_unchanged(name):
    run = tl.load(RUNS / name)
    ref = REFERENCE[name]
    src, tgt = torch.tensor(ref["src_ids"]), torch.tensor(ref["tgt_ids"])
    assert torch.allclose(run.model(src, tgt)[0], torch.tensor(ref["logits"]), atol=1e-5)
    assert translate_texts(run.model, run.src_tokenizer, run.tokenizer, ["alpha beta gamma"]) == ref["translation"]


def test_resuming_a_legacy_run_is_refused_with_a_clear_message(tmp_path):
    import shutil

    shutil.copytree(RUNS / "generator", tmp_path / "old")
    result = subprocess.run(
        [sys.executable, "-m", "transformers_lite", "train", "generator", "--resume", str(tmp_path / "old")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "written by transformers-lite 0.1" in result.stderr and "cannot be resumed" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

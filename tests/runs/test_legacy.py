"""Runs written by earlier releases still load and give the outputs they gave then: 0.1 (commit 5aaa26d,
tests/fixtures/legacy_runs; resuming one is refused with a clear message) and 0.2 (commit ee4c270,
tests/fixtures/runs_0.2, paused half way: they resume)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import transformers_lite as tl
from transformers_lite.evaluation.prediction import classify_texts
from transformers_lite.generation.translate import translate_texts

from .legacy_data import REVIEWS, TEXTS, pairs, reviews

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


# ------------------------------------------------------------------ runs of 0.2 (tests/fixtures/runs_0.2)
RUNS_02 = Path(__file__).resolve().parents[1] / "fixtures" / "runs_0.2"
REFERENCE_02 = json.loads((RUNS_02 / "reference.json").read_text())


def test_a_02_ensemble_classifier_loads_under_todays_names():
    run = tl.load(RUNS_02 / "classifier")
    assert run.config.head == "mean" and run.config.members == 2 and run.tokenizer.split == "words"
    assert any(k.startswith("members.1.encoder.blocks.0.") for k in run.model.state_dict())
    probs = classify_texts(run.model, run.tokenizer, REVIEWS)
    assert torch.allclose(torch.tensor(probs), torch.tensor(REFERENCE_02["classifier"]["paused"]), atol=1e-6)


def test_a_02_pretraining_run_and_translator_give_the_outputs_they_gave():
    mlm = tl.load(RUNS_02 / "mlm")
    ids = torch.tensor([mlm.tokenizer.encode(TEXTS[0])])
    assert torch.allclose(mlm.model(ids)[0], torch.tensor(REFERENCE_02["mlm"]["paused"]), atol=1e-5)
    translator = tl.load(RUNS_02 / "seq2seq")
    assert "decoder.0.cross_attention.qkv.weight" in translator.model.state_dict()  # query and key_value stacked
    assert translator.translate(TEXTS) == REFERENCE_02["seq2seq"]["paused"]


def _resume(name, tmp_path, *data_options):
    import shutil

    run = tmp_path / name
    shutil.copytree(RUNS_02 / name, run)
    result = subprocess.run(
        [sys.executable, "-m", "transformers_lite", "train", name, "--resume", run, *map(str, data_options)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "resumed" in result.stdout and "at step 8" in result.stdout
    return tl.load(run)


def test_a_paused_02_classifier_resumes_exactly_on_a_moved_copy_of_its_data(tmp_path):
    """Its optimizer states are renamed as its weights are; the data moved (same sha256) is accepted, and
    the resumed run ends where 0.2's straight run ended: within 1e-6 on the torch that made the fixture
    (bit for bit on the machine that made it; another CPU's matrix kernels may round the last bit
    otherwise: 0.2's own straight run differs from its recorded one by 3e-8 on such a machine), and within
    1e-3 on another torch release (other kernels, four more steps of training: 5e-4 on torch 2.5).
    Resuming twice gives the same bits."""
    train, dev = reviews(tmp_path)
    run = _resume("classifier", tmp_path, "--train", train, "--val", dev)
    probs = torch.tensor(classify_texts(run.model, run.tokenizer, REVIEWS))
    recorded = json.loads((RUNS_02 / "classifier" / "hyperparameters.json").read_text())["versions"]["torch"]
    same_torch = recorded.split("+")[0] == torch.__version__.split("+")[0]
    atol = 1e-6 if same_torch else 1e-3
    assert torch.allclose(probs, torch.tensor(REFERENCE_02["classifier"]["straight"]), rtol=0, atol=atol)
    again = _resume("classifier", tmp_path / "again", "--train", train, "--val", dev)
    assert torch.equal(probs, torch.tensor(classify_texts(again.model, again.tokenizer, REVIEWS)))


def test_a_paused_02_translator_resumes(tmp_path):
    src, tgt = pairs(tmp_path)
    run = _resume("seq2seq", tmp_path, "--train-src", src, "--train-tgt", tgt, "--val-src", src, "--val-tgt", tgt)
    assert len(run.translate(TEXTS)) == 2


def test_resuming_without_the_moved_data_names_the_missing_file(tmp_path):
    import shutil

    shutil.copytree(RUNS_02 / "mlm", tmp_path / "mlm")
    other = tmp_path / "other.jsonl"
    other.write_text('{"review_body": "not the same reviews", "stars": "1"}\n')
    cmd = [sys.executable, "-m", "transformers_lite", "train", "mlm", "--resume", str(tmp_path / "mlm")]
    gone = subprocess.run(cmd, capture_output=True, text=True)
    assert gone.returncode == 1 and "reviews file /tmp/runs_0.2_data/train.jsonl is gone" in gone.stderr
    changed = subprocess.run([*cmd, "--reviews", str(other)], capture_output=True, text=True)
    assert changed.returncode == 1 and "the command changes reviews" in changed.stderr

"""Devices, bfloat16 autocast and torch.compile on the CPU: a few steps of a tiny model each, with a finite
loss and a run every command loads afterwards."""

import json
import math

import pytest
import torch

import transformers_lite as tl
from transformers_lite.devices import compiled, compiler_missing, resolve_device
from transformers_lite.errors import ConfigError, TliteWarning

TEXT = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n" * 40
TINY = {"dim": 16, "n_heads": 2, "dim_hidden": 32, "n_blocks": 1, "max_length": 16}


def tiny_run(tmp_path, **train):
    (tmp_path / "t.txt").write_text(TEXT)
    experiment = tl.get_preset("baby-gpt").override(
        TINY, max_steps=4, eval_every=2, batch_size=4, text=str(tmp_path / "t.txt"), **train
    )
    out = tmp_path / "run"
    experiment.run(out, log=lambda *_: None)
    return out


def losses(run):
    history = json.loads((run / "history.json").read_text())
    return [row[key] for row in history for key in ("train_loss", "val_loss") if key in row]


def test_auto_picks_the_best_device_and_missing_ones_are_one_line_errors():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else resolve_device("auto"))
    if not torch.cuda.is_available():
        assert resolve_device("auto") in ("cpu", "mps")
        for name in ("cuda", "cuda:1"):
            with pytest.raises(ConfigError, match="torch sees no CUDA device"):
                resolve_device(name)
    with pytest.raises(ConfigError, match="unknown device 'cuda:x'"):
        resolve_device("cuda:x")


def test_bf16_trains_with_a_finite_loss_and_the_run_loads(tmp_path):
    run = tiny_run(tmp_path, bf16=True)
    assert json.loads((run / "hyperparameters.json").read_text())["train"]["bf16"] is True
    values = losses(run)
    assert values and all(math.isfinite(v) for v in values)
    assert len(tl.load(run).generate("To be", max_new_tokens=5)) == len("To be") + 5


@pytest.mark.skipif(compiler_missing("cpu") is not None, reason=str(compiler_missing("cpu")))
def test_compile_trains_with_a_finite_loss_and_the_run_loads(tmp_path):
    run = tiny_run(tmp_path, compile=True)
    values = losses(run)
    assert values and all(math.isfinite(v) for v in values)
    assert len(tl.load(run).generate("To be", max_new_tokens=5)) == len("To be") + 5


def test_compile_without_a_compiler_warns_once_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.delenv("CXX", raising=False)
    assert "needs a C++ compiler" in compiler_missing("cpu")
    module = torch.nn.Linear(2, 2)
    with pytest.warns(TliteWarning, match="running without --compile") as record:
        assert compiled(module, "cpu") is module
    assert len(record) == 1

import json

import pytest
import torch

import transformers_lite
from transformers_lite import GeneratorConfig, build_model
from transformers_lite.atomic import atomic_write, atomic_write_text
from transformers_lite.runs import files, latest_checkpoint
from transformers_lite.tokenizers import CharTokenizer
from transformers_lite.training import checkpoint as ckpt
from transformers_lite.training.optim import make_optimizer

CFG = GeneratorConfig(vocab_size=5, max_length=8, dim=8, n_heads=2, dim_hidden=16, n_blocks=1)


def step(model, opt):
    loss = model(torch.randint(0, 5, (2, 8))).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()


def test_checkpoint_round_trip_restores_model_optimizer_and_rng(tmp_path):
    model = build_model(CFG)
    opt = make_optimizer(model, 1e-3)
    step(model, opt)
    ckpt.save_checkpoint(tmp_path, model, opt, {"step": 1, "history": []})
    expected = torch.rand(3)
    other = build_model(CFG)
    other_opt = make_optimizer(other, 1e-3)
    state = ckpt.load_checkpoint(tmp_path, other, other_opt)
    assert state["step"] == 1
    assert torch.equal(torch.rand(3), expected)  # torch RNG restored to the saved point
    for a, b in zip(model.parameters(), other.parameters()):
        assert torch.equal(a, b)
    sa, sb = opt.state_dict(), other_opt.state_dict()
    for k in sa["state"]:
        assert torch.equal(sa["state"][k]["exp_avg"], sb["state"][k]["exp_avg"])
    assert sa["param_groups"] == sb["param_groups"]


def test_crash_mid_save_leaves_previous_checkpoint_loadable(tmp_path, monkeypatch):
    model = build_model(CFG)
    opt = make_optimizer(model, 1e-3)
    ckpt.save_checkpoint(tmp_path, model, opt, {"step": 1, "history": []})
    step(model, opt)

    def crash(*args, **kwargs):
        raise OSError("disk full (simulated crash)")

    monkeypatch.setattr(files, "save_file", crash)
    with pytest.raises(OSError, match="simulated"):
        ckpt.save_checkpoint(tmp_path, model, opt, {"step": 2, "history": []})
    monkeypatch.undo()
    assert latest_checkpoint(tmp_path).name == "step-00000001"
    fresh = build_model(CFG)
    assert ckpt.load_checkpoint(tmp_path, fresh, make_optimizer(fresh, 1e-3))["step"] == 1
    assert not list(tmp_path.rglob("*.tmp"))


def test_atomic_write_keeps_old_content_when_writer_fails(tmp_path):
    path = tmp_path / "f.json"
    atomic_write_text(path, "old")
    with pytest.raises(RuntimeError):
        atomic_write(path, lambda tmp: (open(tmp, "w").write("partial"), (_ for _ in ()).throw(RuntimeError())))
    assert path.read_text() == "old" and len(list(tmp_path.iterdir())) == 1


def test_checkpoint_files_are_not_pickles(tmp_path):
    model = build_model(CFG)
    opt = make_optimizer(model, 1e-3)
    step(model, opt)
    folder = ckpt.save_checkpoint(tmp_path, model, opt, {"step": 1, "history": []})
    for path in folder.iterdir():
        head = path.read_bytes()[:2]
        assert head != b"\x80\x02" and not path.name.endswith((".pt", ".pkl"))
    json.loads((folder / "state.json").read_text())


def test_load_validates_tokenizer_config_and_weights(tmp_path):
    model = build_model(CFG)
    CFG.to_json(tmp_path / "config.json")
    ckpt.save_weights(model, tmp_path / "model.safetensors")
    CharTokenizer.from_text("abcd").save(tmp_path / "tokenizer.json")  # 5 tokens with the unknown
    run = transformers_lite.load(tmp_path)
    assert run.config == CFG and len(run.tokenizer) == 5 and not run.model.training
    CharTokenizer.from_text("abc").save(tmp_path / "tokenizer.json")
    with pytest.raises(ValueError, match="tokenizer.json has 4 tokens but config.json expects a vocabulary of 5"):
        transformers_lite.load(tmp_path)
    CharTokenizer.from_text("abcd").save(tmp_path / "tokenizer.json")
    CFG.replace(dim=16).to_json(tmp_path / "config.json")
    with pytest.raises(ValueError, match="does not match the model config: .*file \\(5, 8\\) vs model \\(5, 16\\)"):
        transformers_lite.load(tmp_path)
    with pytest.raises(ValueError, match="not a run directory"):
        transformers_lite.load(tmp_path / "nowhere")


def test_a_failed_safetensors_write_names_the_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    from safetensors import SafetensorError

    model = build_model(CFG)
    path = tmp_path / "model.safetensors"
    ckpt.save_weights(model, path)
    before = path.read_bytes()

    def full_disk(*args, **kw):
        raise SafetensorError("Error while serializing: IoError(No space left on device)")

    monkeypatch.setattr(files, "save_model", full_disk)
    with pytest.raises(OSError, match=f"cannot write {path}: safetensors could not write it .*disk full"):
        files.save_weights(model, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["model.safetensors"]

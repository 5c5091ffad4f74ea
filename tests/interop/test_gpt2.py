"""GPT-2 checkpoints in and out, against transformers' own GPT2LMHeadModel (a test-only dependency;
a small random GPT-2 is built and saved locally: no download)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import transformers_lite as tl
from transformers_lite import GeneratorConfig
from transformers_lite.interop.gpt2 import export_gpt2, import_gpt2

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory):
    from tokenizers import ByteLevelBPETokenizer as Trainer

    folder = tmp_path_factory.mktemp("gpt2")
    trainer = Trainer()
    trainer.train_from_iterator(
        ["To be, or not to be, that is the question."] * 20, vocab_size=300, special_tokens=["<|endoftext|>"]
    )
    trainer.save_model(str(folder))  # vocab.json + merges.txt
    vocab = len(json.loads((folder / "vocab.json").read_text()))
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=vocab, n_positions=32, n_embd=32, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0
    )
    model = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # non-trivial norms and biases, so every tensor's mapping is exercised
        for name, p in model.named_parameters():
            if "ln" in name or "bias" in name:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def hf_logits(folder, ids):
    model = transformers.GPT2LMHeadModel.from_pretrained(folder).eval()
    with torch.no_grad():
        return model(ids).logits


def test_imported_gpt2_gives_the_logits_of_transformers(hf_dir, tmp_path):
    run = tl.load(import_gpt2(hf_dir, tmp_path / "run"))
    assert run.config.activation == "gelu_tanh" and not run.config.head_bias and run.tokenizer.kind == "byte-bpe"
    ids = torch.tensor([run.tokenizer.encode("To be, or not to be, that is the question.")])
    assert ids.shape[1] > 5
    assert torch.allclose(run.model(ids), hf_logits(hf_dir, ids), atol=1e-5)
    text = run.generate("To be", max_new_tokens=5, temperature=0)  # every tlite command reads the run
    assert text.startswith("To be")


def test_a_relu2_gpt2_imports_with_the_logits_of_transformers_and_exports_again(hf_dir, tmp_path):
    """ReLU² is Hugging Face's ``relu2``: a GPT-2 with it imports as ``activation=relu2`` and exports back."""
    import shutil

    folder = tmp_path / "relu2"
    shutil.copytree(hf_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "activation_function": "relu2"}))
    run = tl.load(import_gpt2(folder, tmp_path / "run"))
    assert run.config.activation == "relu2"
    ids = torch.randint(0, 200, (2, 20))
    assert torch.allclose(run.model(ids), hf_logits(folder, ids), atol=1e-5)
    export_gpt2(tmp_path / "run", tmp_path / "hf")
    assert torch.allclose(hf_logits(tmp_path / "hf", ids), hf_logits(folder, ids), atol=1e-5)


def test_an_imported_gpt2_traces_step_by_step_with_transformers_logits(hf_dir, tmp_path):
    run = tl.load(import_gpt2(hf_dir, tmp_path / "run"))
    trace = run.trace("To be, or not to be")
    ids = trace["tokens"][None]
    assert torch.allclose(trace["logits"], hf_logits(hf_dir, ids)[0], atol=1e-5)
    assert "blocks.1.attention_residual.norm" in trace  # GPT-2 is pre-norm: the norm comes first
    assert trace.names().index("blocks.1.attention_residual.norm") < trace.names().index("blocks.1.attention.q")
    assert "final_norm" in trace


def test_round_trip_through_export_loads_in_transformers_with_the_same_logits(hf_dir, tmp_path):
    cmd = [sys.executable, "-m", "transformers_lite"]
    assert subprocess.run(cmd + ["import-hf", str(hf_dir), str(tmp_path / "run")], capture_output=True).returncode == 0
    result = subprocess.run(
        cmd + ["export-hf", str(tmp_path / "run"), str(tmp_path / "hf")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    ids = torch.randint(0, 200, (2, 20))
    assert torch.allclose(hf_logits(tmp_path / "hf", ids), hf_logits(hf_dir, ids), atol=1e-5)
    tokenizer = transformers.GPT2TokenizerFast.from_pretrained(tmp_path / "hf")
    assert tokenizer.decode(tokenizer.encode("or not to be")) == "or not to be"


def test_a_folder_with_only_tokenizer_json_imports_and_encodes_alike(hf_dir, tmp_path):
    """Current transformers saves a fast tokenizer as tokenizer.json alone: both layouts give one tokenizer."""
    import shutil

    fast = tmp_path / "fast"
    shutil.copytree(hf_dir, fast)
    tokenizer = transformers.GPT2TokenizerFast.from_pretrained(str(hf_dir))
    (fast / "vocab.json").unlink()
    (fast / "merges.txt").unlink()
    tokenizer.save_pretrained(str(fast))  # transformers 5 writes tokenizer.json only; 4.x the other files too
    for name in ("vocab.json", "merges.txt"):
        (fast / name).unlink(missing_ok=True)
    assert (fast / "tokenizer.json").is_file() and not (fast / "merges.txt").exists()
    old, new = tl.load(import_gpt2(hf_dir, tmp_path / "old")), tl.load(import_gpt2(fast, tmp_path / "new"))
    for text in ["To be, or not to be, that is the question.", "  héllo\n wörld 123 <|endoftext|>", ""]:
        if "<|" not in text:  # (transformers reads the end-of-text mark in a text as the special token)
            assert new.tokenizer.encode(text) == tokenizer.encode(text)
        assert new.tokenizer.encode(text) == old.tokenizer.encode(text)
        assert new.tokenizer.decode(new.tokenizer.encode(text)) == text
    (fast / "tokenizer.json").unlink()
    with pytest.raises(FileNotFoundError, match="no tokenizer.json and no vocab.json"):
        import_gpt2(fast, tmp_path / "none")


def test_pickled_weights_and_non_gpt2_runs_are_refused(hf_dir, tmp_path):
    import shutil

    pickled = tmp_path / "pickled"
    shutil.copytree(hf_dir, pickled)
    (pickled / "model.safetensors").rename(pickled / "pytorch_model.bin")
    with pytest.raises(tl.DataError, match="pickled weights"):
        import_gpt2(pickled, tmp_path / "x")
    run = tmp_path / "seedgpt"
    assert (
        subprocess.run(
            [
                sys.executable,
                "-m",
                "transformers_lite",
                "train",
                "generator",
                "--text",
                str(hf_dir / "merges.txt"),
                "--set",
                "max_length=16",
                "--batch-size",
                "4",
                "--max-steps",
                "1",
                "--out",
                str(run),
            ],
            capture_output=True,
        ).returncode
        == 0
    )
    with pytest.raises(tl.RunError, match="not GPT-2-shaped: post-norm blocks"):
        export_gpt2(run, tmp_path / "out")


def test_a_hub_name_is_fetched_with_huggingface_hub_and_never_pickles(hf_dir, tmp_path, monkeypatch):
    import argparse

    import huggingface_hub

    from transformers_lite.cli.hf import run_import

    asked = {}

    def fake_download(repo_id, allow_patterns):  # the test never touches the network
        asked.update(repo_id=repo_id, patterns=allow_patterns)
        return str(hf_dir)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_download)
    assert run_import(argparse.Namespace(source="gpt2", out=str(tmp_path / "run"), force=False)) == 0
    assert asked["repo_id"] == "gpt2" and not any(p.endswith(".bin") for p in asked["patterns"])
    assert tl.load(tmp_path / "run").config.activation == "gelu_tanh"

    def offline(repo_id, allow_patterns):
        raise OSError("We couldn't connect to 'https://huggingface.co'\nmore detail")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(tl.DataError, match="could not download 'gpt2'.*couldn't connect") as err:
        run_import(argparse.Namespace(source="gpt2", out=str(tmp_path / "run2"), force=False))
    assert "\n" not in str(err.value)


def files_of(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error(capsys, *args):
    """``tlite ARGS`` fails with one ``tlite: error:`` line, returned."""
    from transformers_lite.cli.main import main

    assert main([str(a) for a in args]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tlite: error: ") and len(err.splitlines()) == 1, err
    return err


def test_export_never_writes_over_its_run_or_another_run(hf_dir, tmp_path, capsys):
    run, other = import_gpt2(hf_dir, tmp_path / "run"), import_gpt2(hf_dir, tmp_path / "other")
    before = {run: files_of(run), other: files_of(other)}
    for force in ([], ["--force"]):  # --force does not lift these
        err = one_error(capsys, "export-hf", run, run, *force)
        assert f"{run} is {run} itself or inside it" in err
        err = one_error(capsys, "export-hf", run, run / "hf", *force)
        assert f"{run / 'hf'} is {run} itself or inside it" in err
        err = one_error(capsys, "export-hf", run, other, *force)
        assert f"{other} already holds a run" in err
    assert not (run / "hf").exists() and {run: files_of(run), other: files_of(other)} == before


def test_export_into_a_folder_with_files_needs_force(hf_dir, tmp_path, capsys):
    from transformers_lite.cli.main import main

    run, out = import_gpt2(hf_dir, tmp_path / "run"), tmp_path / "hf"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    err = one_error(capsys, "export-hf", run, out)
    assert f"{out} is not empty (notes.txt); pick another output directory or add --force" in err
    assert files_of(out) == {Path("notes.txt"): b"mine"}
    assert main(["export-hf", str(run), str(out), "--force"]) == 0
    assert (out / "notes.txt").read_text() == "mine" and (out / "model.safetensors").is_file()
    one_error(capsys, "export-hf", run, out)  # a second export: again only with --force
    assert main(["export-hf", str(run), str(out), "--force"]) == 0  # an export folder is no run
    ids = torch.randint(0, 200, (1, 8))
    assert torch.allclose(hf_logits(out, ids), hf_logits(hf_dir, ids), atol=1e-5)
    (tmp_path / "empty").mkdir()
    assert main(["export-hf", str(run), str(tmp_path / "empty")]) == 0  # an empty folder is fine


def test_import_uses_the_same_check(hf_dir, tmp_path, capsys):
    run = import_gpt2(hf_dir, tmp_path / "run")
    assert "already holds a run" in one_error(capsys, "import-hf", hf_dir, run, "--force")
    assert "itself or inside it" in one_error(capsys, "import-hf", hf_dir, hf_dir / "run")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "a.txt").write_text("x")
    assert "is not empty (a.txt)" in one_error(capsys, "import-hf", hf_dir, tmp_path / "busy")
    with pytest.raises(tl.RunError, match="exists and is not a folder"):
        import_gpt2(hf_dir, tmp_path / "busy" / "a.txt")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"n_layer": 1}, r"tensors the config does not describe: h\.1\..*n_layer=1"),  # once a silent layer drop
        ({"n_layer": 3}, r"no tensor h\.2\..*n_layer=3"),
        ({"tie_word_embeddings": False}, r"no tensor lm_head\.weight.*tie_word_embeddings=False"),
        ({"n_inner": 48}, r"h\.0\.mlp\.c_fc\.weight has shape \(32, 128\), the config gives \(32, 48\)"),
        ({"vocab_size": 7}, r"wte\.weight has shape \(\d+, 32\), the config gives \(7, 32\)"),
    ],
)
def test_a_folder_whose_config_and_weights_disagree_is_refused_naming_the_tensor(hf_dir, tmp_path, edit, message):
    """Every tensor of the file is one the config describes, of the shape it gives: no internal error
    and no layer quietly left out."""
    import shutil

    folder = tmp_path / "hf"
    shutil.copytree(hf_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **edit}))
    with pytest.raises(tl.DataError, match=message):
        import_gpt2(folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()


GPT2_SHAPED = dict(norm_first=True, final_norm=True, qkv_bias=True, head_bias=False, activation="gelu_tanh")


@pytest.mark.parametrize(
    "change, named",
    [
        ({"norm_first": False}, "post-norm blocks"),
        ({"final_norm": False}, "no final LayerNorm"),
        ({"position": "rope"}, "rotary positions"),
        ({"head_bias": True}, "a bias on the output Dense"),
        ({"causal": False}, "causal=False (GPT-2: True)"),
    ],
)
def test_every_setting_gpt2_lacks_is_named_before_an_export(change, named):
    """The export compares the model's settings with those GPT-2 would rebuild from it: any that differ
    (a future option too) refuse the export, by name; the initialisation, dropout and a missing Q/K/V bias
    (exported as zeros) do not change what the exported model computes."""
    from transformers_lite.interop.gpt2 import gpt2_differences

    shaped = GeneratorConfig(**GPT2_SHAPED)
    assert gpt2_differences(shaped) == []
    assert gpt2_differences(shaped.replace(init="gpt2", dropout=0.3, qkv_bias=False)) == []
    assert any(named in problem for problem in gpt2_differences(shaped.replace(**change)))


def test_a_default_preset_generator_is_refused_with_the_settings_that_make_one_export(tmp_path):
    """The default preset (post-norm, no final norm, an output bias) cannot become GPT-2 by moving weights:
    the refusal names the ``--set`` settings, and the same preset trained with them exports and gives
    transformers' logits."""
    (tmp_path / "t.txt").write_text("To be, or not to be, that is the question.\n" * 30)
    tiny = ["--set", "dim=16", "--set", "n_heads=2", "--set", "dim_hidden=32", "--set", "max_length=16"]

    def train(out, *extra):
        from transformers_lite.cli.main import main

        cmd = ["train", "generator", "--text", str(tmp_path / "t.txt"), *tiny, *extra]
        assert main(cmd + ["--max-steps", "2", "--batch-size", "4", "--device", "cpu", "--out", str(out)]) == 0

    train(tmp_path / "default")
    with pytest.raises(tl.RunError) as refused:
        export_gpt2(tmp_path / "default", tmp_path / "no")
    flags = "--set norm_first=true --set final_norm=true --set head_bias=false"
    assert f"`tlite train generator ... {flags}`" in str(refused.value)
    train(tmp_path / "shaped", *flags.split())
    export_gpt2(tmp_path / "shaped", tmp_path / "hf")
    run = tl.load(tmp_path / "shaped")
    ids = torch.tensor([run.tokenizer.encode("or not to be")])
    assert torch.allclose(hf_logits(tmp_path / "hf", ids), run.model(ids), atol=1e-5)

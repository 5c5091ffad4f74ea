"""A run's files must match its weights: the manifest names any file edited after training; a damaged
checkpoint falls back to the one before it; a new run that fails before its first checkpoint leaves
nothing behind."""

import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite import GeneratorConfig, Recipe
from transformers_lite.recipes.resume import recorded_recipe
from transformers_lite.runs.manifest import MANIFEST, sha256
from transformers_lite.settings import TrainConfig
from transformers_lite.tasks.generator import GeneratorSettings

from ..helpers import ONE_THREAD, TINY_GPT, tlite

TEXT = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n" * 20
TINY = GeneratorConfig(vocab_size=1, max_length=16, dim=16, n_heads=2, dim_hidden=32, n_blocks=1)
FILES = ("config.json", "tokenizer.json", "model.safetensors")


def _train(tmp_path, out, **train):
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    settings_ = dict(max_steps=6, eval_every=3, lr=1e-3, **train)
    return Recipe("generator", TINY, TrainConfig(**settings_), GeneratorSettings(text=str(text), batch_size=4)).run(
        out, log=lambda *_: None
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("manifest")
    return _train(tmp, tmp / "run").run_dir


def test_a_run_records_the_sha256_of_its_config_tokenizer_and_weights(run_dir):
    recorded = json.loads((run_dir / MANIFEST).read_text())["sha256"]
    assert sorted(recorded) == sorted((*FILES, "hyperparameters.json"))
    assert all(recorded[name] == sha256(run_dir / name) for name in FILES)


def test_a_deleted_manifest_is_an_error_not_a_run_that_loads_unchecked(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / MANIFEST).unlink()
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "n_heads": 1}))  # an edit nothing else would see
    with pytest.raises(ValueError, match="manifest.json is missing; the run wrote one"):
        tl.load(copy)
    assert tl.load(copy, trust_edited=True).config.n_heads == 1
    recorded = json.loads((copy / "hyperparameters.json").read_text())
    del recorded["manifest"]  # a run of a release that kept no manifest: loads unchecked, as it always did
    (copy / "hyperparameters.json").write_text(json.dumps(recorded))
    assert tl.load(copy).config.n_heads == 1


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FILES), where=st.floats(0, 1), byte=st.integers(1, 255))
def test_any_edit_of_a_recorded_file_is_named_unless_trusted(run_dir, tmp_path_factory, name, where, byte):
    copy = tmp_path_factory.mktemp("edited") / "run"
    shutil.copytree(run_dir, copy)
    data = bytearray((copy / name).read_bytes())
    i = min(int(where * len(data)), len(data) - 1)
    data[i] ^= byte  # one byte changed, anywhere in the file
    (copy / name).write_bytes(bytes(data))
    with pytest.raises(ValueError, match=name) as err:  # never silent: damaged, mismatched or changed
        tl.load(copy)
    try:  # trusted: the edited file is read as it is (it may still fail its own checks, naming itself)
        tl.load(copy, trust_edited=True)
    except ValueError as trusted:
        assert "changed after the run wrote it" not in str(trusted) and name in str(trusted)
    else:
        assert "changed after the run wrote it" in str(err.value)  # it read fine: only the manifest saw it


def test_an_edited_config_is_refused_on_the_command_line_and_trusted_on_request(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    config = json.loads((copy / "config.json").read_text())
    config["norm_first"] = not config["norm_first"]  # loads fine, computes something else
    (copy / "config.json").write_text(json.dumps(config))
    refused = tlite("generate", copy, "--max-new-tokens", "3", env=ONE_THREAD)
    assert refused.returncode == 1 and "config.json was changed after the run wrote it" in refused.stderr
    assert "Traceback" not in refused.stderr
    trusted = tlite("generate", copy, "--max-new-tokens", "3", "--trust-edited", env=ONE_THREAD)
    assert trusted.returncode == 0, trusted.stderr


def test_a_damaged_checkpoint_resumes_from_the_one_before_it(tmp_path):
    run = _train(tmp_path, tmp_path / "run", checkpoint_every=2).run_dir
    folders = sorted((run / "checkpoint").glob("step-*"))
    assert [f.name for f in folders] == ["step-00000004", "step-00000006"]
    (folders[-1] / "state.json").write_text("{ not json")
    with pytest.warns(UserWarning, match="step-00000006/state.json: damaged checkpoint state.*step-00000004"):
        result = recorded_recipe(run).run(resume_dir=run, log=lambda *_: None)
    assert result.state.step == 6
    names = sorted(p.name for p in (run / "checkpoint").iterdir())
    assert "damaged-step-00000006" in names and (run / "checkpoint" / "LATEST").read_text().strip() == "step-00000006"


def test_a_new_run_that_fails_before_its_first_checkpoint_leaves_no_folder(tmp_path, monkeypatch):
    from transformers_lite.training import trainer

    def broken(*args, **kw):
        raise RuntimeError("a failure inside the first step")

    monkeypatch.setattr(trainer.Trainer, "fit", broken)
    with pytest.raises(RuntimeError, match="first step"):
        _train(tmp_path, tmp_path / "run")
    assert not (tmp_path / "run").exists()
    monkeypatch.undo()
    assert _train(tmp_path, tmp_path / "run").state.step == 6  # the same command, corrected, reuses --out


def test_a_tiny_cli_run_writes_a_manifest(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text(TEXT)
    out = tmp_path / "gen"
    done = tlite("train", "generator", "--text", text, *TINY_GPT, "--max-steps", "2", "--out", out, env=ONE_THREAD)
    assert done.returncode == 0, done.stderr
    assert set(json.loads((out / MANIFEST).read_text())["sha256"]) == {*FILES, "hyperparameters.json"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "manifest.json is empty"),
        (b"  \n", "manifest.json is empty"),
        (b"{}", "manifest.json records no file"),
        (b'{"sha256": {}}', "manifest.json records no file"),
    ],
)
def test_an_empty_manifest_is_named_as_empty_not_as_missing(run_dir, tmp_path, content, message):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / MANIFEST).write_bytes(content)
    with pytest.raises(ValueError, match=message):
        tl.load(copy)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.binary(min_size=1, max_size=60).filter(bytes.strip)
    | st.sampled_from([b'{"format": 2, "sha256": {"config.json": 7}}', b"[1, 2]", b'{"format": "2", "sha256": {}}'])
)
def test_a_damaged_manifest_is_named_and_never_written_over(run_dir, tmp_path_factory, content):
    """Recording a file's sha256 reads the manifest, adds the entry and writes it back: a manifest that
    cannot be read is named and kept as it is, not replaced by one listing only the new file."""
    from transformers_lite.errors import RunError
    from transformers_lite.runs.manifest import record

    copy = tmp_path_factory.mktemp("damaged") / "run"
    shutil.copytree(run_dir, copy)
    (copy / MANIFEST).write_bytes(content)
    try:
        json_value = json.loads(content.decode("utf-8"))
    except ValueError:
        json_value = None
    valid = isinstance(json_value, dict) and isinstance(json_value.get("sha256", {}), dict)
    valid = valid and all(isinstance(v, str) for v in json_value["sha256"].values())
    if valid and type(json_value.get("format", 1)) is int:
        return  # a manifest that reads: recording into it is right
    with pytest.raises(RunError, match="manifest.json: damaged manifest.*left as it is"):
        record(copy, ["config.json"])
    assert (copy / MANIFEST).read_bytes() == content


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(latest=st.binary(max_size=30).filter(lambda b: not b.strip().startswith(b"step-0000000")))
def test_a_latest_that_names_no_checkpoint_is_said_before_it_is_written_again(run_dir, tmp_path_factory, latest):
    """``checkpoint/LATEST`` is rewritten when a run resumes from another checkpoint than it names: what it
    said is warned about first, naming the file, never replaced without a word."""
    copy = tmp_path_factory.mktemp("latest") / "run"
    shutil.copytree(run_dir, copy)
    (copy / "checkpoint" / "LATEST").write_bytes(latest)
    with pytest.warns(UserWarning, match=r"checkpoint/LATEST names .*no complete checkpoint.*step-00000006"):
        result = recorded_recipe(copy).run(resume_dir=copy, log=lambda *_: None)
    assert result.state.step == 6
    assert (copy / "checkpoint" / "LATEST").read_text() == "step-00000006\n"

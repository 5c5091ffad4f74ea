"""Damaged, half-written and changed run directories: one clear line naming the file, or a recovery
that loses nothing. The case ids are rows of docs/reliability.md."""

import json
import os
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from transformers_lite.runs import latest_checkpoint


@pytest.fixture
def gen(runs, tmp_path):
    """A private copy of the tiny generator run (each test may damage it)."""
    shutil.copytree(runs / "generator", tmp_path / "run")
    return tmp_path / "run"


def one_error(result, *fragments):
    assert result.code == 1, result.out
    assert len(result.lines) == 1 and result.lines[0].startswith("tlite: error: "), result.err
    for fragment in fragments:
        assert fragment in result.lines[0], result.err


def test_truncated_weights(cli, gen):
    data = (gen / "model.safetensors").read_bytes()
    (gen / "model.safetensors").write_bytes(data[: len(data) // 2])
    one_error(cli("generate", gen), "model.safetensors: damaged safetensors file")


def test_random_bytes_as_weights(cli, gen):
    (gen / "model.safetensors").write_bytes(os.urandom(4096))
    one_error(cli("generate", gen), "model.safetensors: damaged safetensors file")


def test_weights_that_load_as_nan(cli, gen):
    tensors = load_file(gen / "model.safetensors")
    name = sorted(tensors)[0]
    tensors[name] = torch.full_like(tensors[name], float("nan"))
    save_file(tensors, gen / "model.safetensors")
    one_error(cli("evaluate", gen), "model.safetensors", f"tensor {name} holds NaN")


@pytest.mark.parametrize(
    "name, what", [("config.json", "damaged model config"), ("tokenizer.json", "damaged tokenizer file")]
)
def test_broken_json_files_name_the_file(cli, gen, name, what):
    (gen / name).write_text('{"kind": "char", "vocab')
    one_error(cli("generate", gen), name, what)


def test_broken_hyperparameters_matter_only_to_commands_that_read_them(cli, gen):
    (gen / "hyperparameters.json").write_text("{oops")
    assert cli("generate", gen, "--max-new-tokens", "5").code == 0  # generate reads only weights and tokenizer
    one_error(cli("evaluate", gen), "hyperparameters.json: damaged hyperparameters file")


def test_missing_tokenizer(cli, gen):
    (gen / "tokenizer.json").unlink()
    one_error(cli("generate", gen), "tokenizer.json is missing")


def test_latest_naming_a_missing_folder_falls_back_to_the_newest_complete_checkpoint(cli, gen):
    (gen / "checkpoint" / "LATEST").write_text("step-00099999\n")
    assert latest_checkpoint(gen).name == "step-00000004"
    result = cli("train", "generator", "--resume", gen, "--max-steps", "6")
    assert result.code == 0 and "resumed" in result.out and "at step 6" in result.out


def test_a_checkpoint_linked_from_outside_the_run_is_never_loaded_nor_kept_over_real_ones(cli, gen, tmp_path):
    outside = tmp_path / "elsewhere" / "step-00000004"
    shutil.copytree(gen / "checkpoint" / "step-00000004", outside)
    (gen / "checkpoint" / "step-00000009").symlink_to(outside, target_is_directory=True)
    (gen / "checkpoint" / "LATEST").write_text("step-00000009\n")
    assert latest_checkpoint(gen).name == "step-00000004" and latest_checkpoint(gen).parent == gen / "checkpoint"
    result = cli("train", "generator", "--resume", gen, "--max-steps", "6")
    assert result.code == 0 and "at step 6" in result.out
    assert (gen / "checkpoint" / "step-00000009").is_symlink() and outside.is_dir()  # the link is left alone


def test_a_run_stopped_before_its_first_checkpoint_trains_again_from_step_0(cli, runs, gen):
    shutil.rmtree(gen / "checkpoint")  # what a kill between the metadata and the first checkpoint leaves:
    for name in ("model.safetensors", "history.json", "metrics.csv", "kept.json"):  # nothing a step writes
        (gen / name).unlink(missing_ok=True)
    result = cli("train", "generator", "--out", gen)
    one_error(result, "already holds a run; use --resume")
    result = cli("train", "generator", "--resume", gen)
    assert result.code == 0 and "no checkpoint yet" in result.out
    a, b = load_file(runs / "generator" / "model.safetensors"), load_file(gen / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)  # the recorded settings, from step 0: the same run


def test_out_into_a_folder_of_other_files_is_refused(cli, files, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")
    one_error(
        cli("train", "generator", "--text", files / "text.txt", "--max-steps", "1", "--out", folder),
        "is a folder with other files in it (notes.txt",
    )
    assert (folder / "notes.txt").read_text() == "my notes" and len(list(folder.iterdir())) == 1


def test_a_changed_training_file_is_refused_on_resume_and_evaluate(cli, files, tmp_path):
    text = tmp_path / "t.txt"
    text.write_text((files / "text.txt").read_text())
    run = tmp_path / "run"
    assert (
        cli(
            "train",
            "generator",
            "--text",
            text,
            "--set",
            "max_length=16",
            "--batch-size",
            "4",
            "--max-steps",
            "3",
            "--stop-at",
            "2",
            "--out",
            run,
        ).code
        == 0
    )
    text.write_text(text.read_text().upper())
    one_error(cli("train", "generator", "--resume", run), "changed since", "sha256 differs")
    one_error(cli("evaluate", run), "changed since", "pass --text FILE")


def test_the_original_command_with_resume_added_is_accepted(cli, files, tmp_path):
    command = [
        "train",
        "generator",
        "--text",
        files / "text.txt",
        "--preset",
        "seed-gpt",
        "--set",
        "max_length=16",
        "--batch-size",
        "4",
        "--max-steps",
        "4",
    ]
    assert cli(*command, "--stop-at", "2", "--out", tmp_path / "run").code == 0
    result = cli(*command, "--resume", tmp_path / "run")
    assert result.code == 0 and "resumed" in result.out and "at step 4" in result.out


def test_run_files_are_readable_like_any_other_output(gen):
    umask = os.umask(0)
    os.umask(umask)
    expected = 0o666 & ~umask
    for path in [
        gen / "model.safetensors",
        gen / "config.json",
        gen / "hyperparameters.json",
        *latest_checkpoint(gen).iterdir(),
    ]:
        assert path.stat().st_mode & 0o777 == expected, path


def test_a_history_file_is_valid_json_after_every_checkpoint(gen):
    history = json.loads((gen / "history.json").read_text())
    assert history[-1]["step"] == 4

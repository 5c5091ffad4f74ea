"""A run's life cycle checks what it relies on (``runs/complete.py``): load, the recorded settings, resume
and the end of a training name the file that is missing, instead of a wrong message or "run saved"."""

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite.cli.main import main
from transformers_lite.errors import RunError
from transformers_lite.recipes.resume import recorded_recipe
from transformers_lite.training.callbacks import Callback

from ..helpers import TINY_GPT
from ..reliability.conftest import cli, files, runs  # noqa: F401 - fixtures reused here

FILES = ["hyperparameters.json", "config.json", "tokenizer.json", "model.safetensors", "manifest.json", "checkpoint"]
# what each way in reads: the files whose absence it must name
MOMENTS = {
    "load": (lambda run: tl.load(run), {"config.json", "tokenizer.json"}),
    "settings": (lambda run: tl.load(run).hyperparameters, {"hyperparameters.json", "config.json", "tokenizer.json"}),
    "resume": (recorded_recipe, {"hyperparameters.json", "config.json", "tokenizer.json"}),
}


@settings(max_examples=30)
@given(gone=st.sets(st.sampled_from(FILES)), moment=st.sampled_from(sorted(MOMENTS)))
def test_a_missing_file_is_named_by_every_way_in(runs, tmp_path_factory, gone, moment):  # noqa: F811
    run = tmp_path_factory.mktemp("run") / "gpt"
    shutil.copytree(runs / "generator", run)
    for name in gone:
        shutil.rmtree(run / name) if (run / name).is_dir() else (run / name).unlink()
    use, relies_on = MOMENTS[moment]
    weights = {"model.safetensors", "checkpoint"}  # the final file or a checkpoint, either will do
    loading = MOMENTS["load"][1] | (weights if weights <= gone else set())
    if moment == "load":
        relies_on = loading
    if moment == "resume" and "checkpoint" in gone:  # without a checkpoint, resuming reads only the settings,
        relies_on = {"hyperparameters.json"}  # and trains from step 0: unless the run finished (its final weights
        if "model.safetensors" not in gone:  # are there), which the missing checkpoint would overwrite: named
            relies_on = relies_on | {"checkpoint"}
    if "config.json" in gone:  # which tokenizer files a run reads, its config says: config.json is named
        relies_on = relies_on - {"tokenizer.json"}
    loading -= {"tokenizer.json"} if "config.json" in gone else set()
    if moment == "settings" and loading & gone:  # the settings are read from a loaded run: loading fails first
        relies_on = loading
    expected = sorted(relies_on & gone)
    manifest_rule = "hyperparameters.json" not in gone  # a run that records it must keep its manifest too
    if "manifest.json" in gone and manifest_rule and moment != "resume" and not expected:  # runs/manifest.py
        with pytest.raises(RunError, match="manifest.json is missing"):
            use(run)
        return
    if not expected:
        use(run)
        return
    with pytest.raises(RunError) as err:
        use(run)
    message = str(err.value)
    if "not a run directory" in message:  # none of the files that make a folder a run: those are named
        assert {"config.json", "hyperparameters.json"} <= gone and "config.json" in message, message
    else:
        assert "missing" in message and all(name.split(".")[0] in message for name in expected), message
    assert not any(f"{name} is missing" in message for name in set(FILES) - gone), message


def test_evaluate_without_hyperparameters_names_it(cli, runs, tmp_path):  # noqa: F811
    shutil.copytree(runs / "generator", tmp_path / "gpt")
    (tmp_path / "gpt" / "hyperparameters.json").unlink()
    result = cli("evaluate", tmp_path / "gpt")
    assert result.code == 1 and "recorded no" not in result.err
    assert result.lines == [
        f"tlite: error: {tmp_path / 'gpt'}: hyperparameters.json is missing; its recorded settings "
        "(data files, seed, validation split) are kept there: restore it from a copy of the run"
    ]


class DeleteTheRun(Callback):
    """Deletes the run folder after step 2, as a user cleaning up the wrong folder would."""

    def __init__(self, run_dir):
        self.run_dir = run_dir

    def on_step_end(self, trainer, state, loss):
        if state.step == 2:
            shutil.rmtree(self.run_dir)


def test_a_training_whose_folder_is_deleted_under_it_is_not_saved(files, tmp_path, capsys):  # noqa: F811
    from transformers_lite.cli import train
    from transformers_lite.cli.main import build_parser

    out = tmp_path / "run"
    args = build_parser().parse_args(
        ["train", "generator", "--text", str(files / "text.txt"), *TINY_GPT, "--max-steps", "4", "--out", str(out)]
    )
    with pytest.raises(RunError, match="hyperparameters.json, config.json are missing; the run folder was deleted"):
        train.run(args, callbacks=[DeleteTheRun(out)])
    assert "run saved" not in capsys.readouterr().out


def test_a_run_without_weights_is_told_from_one_still_training_by_its_lock(runs, tmp_path):  # noqa: F811
    """No weights yet is what a run training before its first checkpoint holds: while a process holds its
    lock, loading says so (not "copy the whole run folder again"); without one, it names the missing
    weights and how a run stopped before its first checkpoint is trained from its settings."""
    from transformers_lite.training.rundir import RunLock

    run = tmp_path / "gpt"
    shutil.copytree(runs / "generator", run)
    shutil.rmtree(run / "checkpoint")
    (run / "model.safetensors").unlink()
    with pytest.raises(RunError, match="is missing; a run stopped before its first checkpoint") as err:
        tl.load(run)
    assert f"(tlite train --resume {run})" in str(err.value)
    with RunLock(run), pytest.raises(RunError, match="is still training and has no checkpoint yet") as err:
        tl.load(run)
    assert "missing" not in str(err.value) and "copy" not in str(err.value)


def _resume(run, how, capsys):
    """None when ``--resume`` (the command, or ``Recipe.run`` from Python) trained, else its error."""
    if how == "python":
        try:
            recorded_recipe(run).run(resume_dir=run, log=lambda *_: None)
        except RunError as err:
            return str(err)
        return None
    code = main(["train", "generator", "--resume", str(run)])
    err = capsys.readouterr().err
    return None if code == 0 else err


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kept=st.sets(st.sampled_from(["model.safetensors", "history.json", "metrics.csv"])),  # history: from step 1
    how=st.sampled_from(["python", "command"]),
)
def test_a_run_without_checkpoints_trains_from_step_0_only_if_it_never_trained(
    runs,  # noqa: F811
    tmp_path_factory,
    capsys,
    kept,
    how,
):
    """``--resume`` of a run whose checkpoints are gone: a run that never finished (killed before its first
    checkpoint, its history and metrics written so far) trains its recorded settings from step 0; one that
    finished training (its final weights) is refused naming the missing checkpoint, and its files are left
    as they are."""
    run = tmp_path_factory.mktemp("run") / "gpt"
    shutil.copytree(runs / "generator", run)
    shutil.rmtree(run / "checkpoint")
    for name in {"model.safetensors", "history.json", "metrics.csv", "kept.json"} - kept:
        (run / name).unlink(missing_ok=True)
    before = {name: (run / name).read_bytes() for name in kept}
    error = _resume(run, how, capsys)
    if "model.safetensors" not in kept:
        assert error is None
        assert (run / "model.safetensors").is_file() and (run / "checkpoint" / "LATEST").is_file()
        return
    assert (
        error is not None and "checkpoint/LATEST (a complete checkpoint) is missing though the run has trained" in error
    )
    assert "model.safetensors" in error and "from step 0 over its weights" in error
    assert {name: (run / name).read_bytes() for name in kept} == before

import pytest

from transformers_lite import GeneratorConfig, Recipe, get_preset
from transformers_lite.errors import DataError
from transformers_lite.runs import latest_checkpoint
from transformers_lite.runs.complete import is_training
from transformers_lite.runs.history import read_history, read_metrics
from transformers_lite.runs.snapshots import read_timeline
from transformers_lite.settings import TrainConfig
from transformers_lite.tasks.generator import GeneratorSettings
from transformers_lite.training.callbacks import Callback
from transformers_lite.training.rundir import RunLock, discard_if_empty, discard_unstarted, new_run_dir


def test_dated_run_directories_get_suffixes(tmp_path):
    first, second = new_run_dir(root=tmp_path), new_run_dir(root=tmp_path)
    assert first != second and second.name.startswith(first.name) and second.name.endswith("_2")


def test_discard_removes_only_folders_holding_nothing_but_the_lock(tmp_path):
    empty = new_run_dir(tmp_path / "a")
    with RunLock(empty):
        pass
    assert discard_if_empty(empty) and not empty.exists()
    used = new_run_dir(tmp_path / "b")
    (used / "config.json").write_text("{}")
    assert not discard_if_empty(used) and (used / "config.json").is_file()


def test_a_run_that_fails_on_bad_data_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(DataError):
        get_preset("post-gpt").override(text="empty.txt", max_steps=1).run()
    assert not (tmp_path / "outputs").exists() or not any((tmp_path / "outputs").iterdir())
    kept = tmp_path / "mine"
    kept.mkdir()  # a folder the user made stays, even when the run in it fails
    with pytest.raises(DataError):
        get_preset("post-gpt").override(text="empty.txt", max_steps=1).run(kept)
    assert kept.is_dir()


class Peek(Callback):
    """What the run folder holds at the end of step ``at``, before its first checkpoint (then ``fail``s)."""

    def __init__(self, run_dir, at, fail=False):
        self.run_dir, self.at, self.fail, self.seen = run_dir, at, fail, None

    def on_step_end(self, trainer, state, loss):
        if state.step == self.at:
            self.seen = {
                "checkpoint": latest_checkpoint(self.run_dir),
                "training": is_training(self.run_dir),
                "metrics": read_metrics(self.run_dir),
                "history": read_history(self.run_dir),
                "snapshots": [s["step"] for s in read_timeline(self.run_dir)],
            }
            if self.fail:
                raise RuntimeError("a failure after the first steps")


def _tiny(tmp_path, **train):
    text = tmp_path / "text.txt"
    text.write_text("To be, or not to be, that is the question:\n" * 40)
    settings = dict(max_steps=8, eval_every=6, log_every=1, warmup_steps=1, snapshots=4, **train)
    config = GeneratorConfig(dim=16, n_heads=2, dim_hidden=32, n_blocks=1, max_length=16)
    return Recipe("generator", config, TrainConfig(**settings), GeneratorSettings(text=str(text), batch_size=4))


def test_a_run_writes_its_record_and_timeline_before_its_first_checkpoint(tmp_path):
    """A run is seen while it trains: by step 3 of a run that checkpoints at step 6, its folder already
    holds the first training-loss row (written at once; then every few seconds) and the step-0 snapshot,
    and its lock says it is training."""
    peek = Peek(tmp_path / "run", at=3)
    _tiny(tmp_path).run(tmp_path / "run", callbacks=[peek], log=lambda *_: None)
    seen = peek.seen
    assert seen["checkpoint"] is None and seen["training"] and seen["history"] == []
    steps = [row["step"] for row in seen["metrics"]]
    assert steps[0] == 1 and set(steps) <= {1, 2, 3} and seen["metrics"][0]["train_loss"] > 0
    assert seen["snapshots"] == [0]
    assert not is_training(tmp_path / "run")  # ended: the lock is free


def test_a_new_run_that_fails_after_writing_its_record_leaves_no_folder(tmp_path):
    """The record and snapshots written before the first checkpoint go with the rest of a failed new run,
    so the same command, corrected, can use its --out again."""
    peek = Peek(tmp_path / "run", at=3, fail=True)
    with pytest.raises(RuntimeError, match="after the first steps"):
        _tiny(tmp_path).run(tmp_path / "run", callbacks=[peek], log=lambda *_: None)
    assert peek.seen["metrics"] and peek.seen["snapshots"] == [0]  # it had written them
    assert not (tmp_path / "run").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "snapshots").mkdir()
    (tmp_path / "mine" / "snapshots" / "notes.txt").write_text("mine")  # not a snapshot: the folder stays
    (tmp_path / "mine" / "config.json").write_text("{}")
    assert not discard_unstarted(tmp_path / "mine") and (tmp_path / "mine" / "snapshots" / "notes.txt").is_file()

import pytest

from transformers_lite import get_preset
from transformers_lite.errors import DataError
from transformers_lite.training.rundir import RunLock, discard_if_empty, new_run_dir


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

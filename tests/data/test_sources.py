import pytest

from transformers_lite.data import sources


def test_resolution_order(tmp_path, monkeypatch):
    monkeypatch.setenv("TLITE_DATA_DIR", str(tmp_path / "root"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "root" / "tinyshakespeare").mkdir(parents=True)
    (tmp_path / "root" / "tinyshakespeare" / "input.txt").write_text("x")
    assert sources.resolve("tinyshakespeare", "input.txt") == tmp_path / "root" / "tinyshakespeare" / "input.txt"
    explicit = tmp_path / "mine.txt"
    explicit.write_text("y")
    assert sources.resolve("tinyshakespeare", "input.txt", explicit) == explicit
    with pytest.raises(FileNotFoundError, match="tlite data download multi30k"):
        sources.resolve("multi30k", "train.de.gz")
    with pytest.raises(FileNotFoundError, match="withdrawn"):
        sources.resolve("amazon_reviews_multi_en", "train.jsonl")


def test_download_verifies_sha256_and_never_leaves_partial_files(tmp_path, monkeypatch):
    payload = tmp_path / "served.txt"
    payload.write_text("not the real file")
    monkeypatch.setitem(sources.DATASETS, "fake", {"f.txt": (payload.as_uri(), "0" * 64)})
    with pytest.raises(ValueError, match="does not match"):
        sources.download("fake", tmp_path / "cache")
    assert list((tmp_path / "cache" / "fake").iterdir()) == []
    monkeypatch.setitem(sources.DATASETS, "fake", {"f.txt": (payload.as_uri(), sources.sha256(payload))})
    [path] = sources.download("fake", tmp_path / "cache")
    assert path.read_text() == "not the real file"
    with pytest.raises(ValueError, match="no public source|withdrawn"):
        sources.download("amazon_reviews_multi_en")


def test_a_folders_sha256_follows_its_files_not_its_place(tmp_path):
    folder = tmp_path / "ds"
    (folder / "sub").mkdir(parents=True)
    (folder / "state.json").write_text('{"a": 1}')
    (folder / "sub" / "data-00000-of-00001.arrow").write_bytes(b"\x00\x01rows")
    before = sources.sha256(folder)
    assert len(before) == 64 and before == sources.sha256(folder)
    (folder / ".lock").write_text("")  # hidden files are no data
    assert sources.sha256(folder) == before
    moved = tmp_path / "elsewhere"
    folder.rename(moved)
    assert sources.sha256(moved) == before
    (moved / "sub" / "data-00000-of-00001.arrow").write_bytes(b"\x00\x01rowz")
    assert sources.sha256(moved) != before
    (moved / "sub" / "data-00000-of-00001.arrow").write_bytes(b"\x00\x01rows")
    (moved / "sub" / "data-00000-of-00001.arrow").rename(moved / "sub" / "data-renamed.arrow")
    assert sources.sha256(moved) != before  # a file's name is part of what the folder holds

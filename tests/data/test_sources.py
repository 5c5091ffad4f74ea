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

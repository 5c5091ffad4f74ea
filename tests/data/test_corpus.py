"""A generator's corpus from a file, a folder or a pattern: every text file read once, in order; nothing
else read as text; a sha256 that follows the contents, not the place."""

import shutil
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.data.corpus import corpus_sha256, read_corpus
from transformers_lite.errors import DataError

LINES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r\ufeff"), min_size=1)


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(LINES.filter(lambda t: t.strip()), min_size=1, max_size=6))
def test_every_text_file_of_a_folder_is_read_once_in_path_order(tmp_path_factory, texts):
    folder = tmp_path_factory.mktemp("corpus")
    for i, text in enumerate(texts):
        (folder / "sub" if i % 2 else folder).mkdir(exist_ok=True)
        ((folder / "sub" if i % 2 else folder) / f"f{i:02d}.txt").write_text(text, encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    corpus = read_corpus(folder)
    paths = sorted(p for p in folder.rglob("f*.txt"))
    assert [p for p, _ in corpus.files] == paths  # hidden folders never read, the image skipped
    assert [p.name for p, _ in corpus.skipped] == ["image.png"]
    expected = "".join(t if t.endswith("\n") else t + "\n" for t in (p.read_text(encoding="utf-8") for p in paths))
    if len(paths) > 1:
        assert corpus.text == expected


def test_a_pattern_a_moved_copy_and_a_changed_file(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def a():\n    return 1\n")
    (tmp_path / "src" / "b.py").write_text("def b():\n    return 2\n")
    (tmp_path / "src" / "notes.md").write_text("not code\n")
    corpus = read_corpus(str(tmp_path / "src" / "*.py"))
    assert [p.name for p, _ in corpus.files] == ["a.py", "b.py"] and "not code" not in corpus.text
    assert corpus.report() == "read 2 files (44 characters; largest: a.py 22, b.py 22)"
    before = corpus_sha256(tmp_path / "src")
    shutil.copytree(tmp_path / "src", tmp_path / "moved")
    assert corpus_sha256(tmp_path / "moved") == before
    (tmp_path / "moved" / "b.py").write_text("def b():\n    return 3\n")
    assert corpus_sha256(tmp_path / "moved") != before
    with pytest.raises(DataError, match="no file found"):
        read_corpus(str(tmp_path / "src" / "*.rs"))


def test_compiled_and_binary_files_are_skipped_in_one_line_grouped_by_why(tmp_path):
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    for i in range(4):
        (tmp_path / "pkg" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        (tmp_path / "pkg" / "__pycache__" / f"m{i}.cpython-311.pyc").write_bytes(b"\xa7\r\r\nrest of a pyc")
    (tmp_path / "pkg" / "_speedups.so").write_bytes(b"\x7fELF-like bytes with no NUL")
    (tmp_path / "pkg" / "tool").write_bytes(b"#!\x00\x01binary")
    (tmp_path / "pkg" / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    corpus = read_corpus(tmp_path / "pkg")
    assert [p.name for p, _ in corpus.files] == [f"m{i}.py" for i in range(4)]
    line = corpus.skipped_line()
    assert line == (
        "skipped 7 files that are not UTF-8 text: 5 compiled (4 .pyc, 1 .so); 1 binary (tool); "
        "1 other (latin.txt: bytes that are not UTF-8 (b'\\xe9'); save the file as UTF-8)"
    )
    assert line.count("save the file as UTF-8") == 1 and "\n" not in line
    assert corpus.report().endswith("; " + line)


@settings(max_examples=30, deadline=None)
@given(
    depth=st.integers(1, 3),
    stars=st.integers(1, 3),
    links=st.lists(st.integers(0, 5), max_size=3),
    n=st.integers(1, 4),
)
def test_a_file_named_more_than_once_is_read_once_and_said(tmp_path_factory, depth, stars, links, n):
    """A pattern that reaches a file by several ways (``**/**/*.txt``) or a folder holding a link to one of
    its files names that file more than once: it is read once, and a warning names it and how often."""
    root = tmp_path_factory.mktemp("twice")
    folder = root.joinpath(*[f"d{i}" for i in range(depth)])
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"f{i}.txt").write_text(f"text of file {i}\n")
    for k, target in enumerate(links):
        if target < n:
            (root / f"link{k}.txt").symlink_to(folder / f"f{target}.txt")
    spec = root / "/".join(["**"] * stars) / "*.txt"
    expected = "".join(f"text of file {i}\n" for i in range(n))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = read_corpus(spec)
    assert sorted(corpus.text.splitlines(keepends=True)) == sorted(expected.splitlines(keepends=True))
    said = [str(w.message) for w in caught if "more than once" in str(w.message)]
    twice = stars > 1 and depth >= 1 or any(t < n for t in links)
    assert bool(said) == twice, said
    if said:
        assert said[0].startswith(f"{spec} names ") and "each is read once" in said[0]


def test_exclude_leaves_out_files_by_name_or_path_inside_the_folder(tmp_path):
    from transformers_lite.data.corpus import corpus_sha256, read_corpus
    from transformers_lite.errors import ConfigError, DataError
    from transformers_lite.tasks.generator import GeneratorSettings

    (tmp_path / "data").mkdir()
    (tmp_path / "a.py").write_text("alpha\n")
    (tmp_path / "b.json").write_text("{}\n")
    (tmp_path / "data" / "c.py").write_text("gamma\n")
    corpus = read_corpus(tmp_path, "*.json, data/*")
    assert corpus.text == "alpha\n" and [p.name for p in corpus.excluded] == ["b.json", "c.py"]
    assert "left out 2 files matching --exclude (b.json, c.py)" in corpus.report()
    assert read_corpus(tmp_path, "c.py").text == "alpha\n{}\n"  # by name, wherever it is
    assert corpus_sha256(tmp_path, "*.json,data/*") != corpus_sha256(tmp_path)
    with pytest.raises(DataError, match=r"--exclude '\*' leaves out every one of its 3 files"):
        read_corpus(tmp_path, "*")
    with pytest.raises(ConfigError, match="--exclude '\\*.json' leaves files out of --text: give --text"):
        GeneratorSettings(exclude="*.json")

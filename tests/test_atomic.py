"""``atomic_write`` replaces only regular files: a link keeps being a link (its target gets the new
content), a device or FIFO is written in place, a directory is an error naming the path."""

import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformers_lite.atomic import atomic_write, atomic_write_text

KINDS = ("new", "file", "link-to-file", "link-to-link", "dangling-link", "link-to-new-folder", "fifo", "dev-null")


def make(kind: str, folder: Path) -> tuple[Path, Path | None]:
    """``(path to write, the regular file that must end up with the text, or None for a stream)``."""
    target = folder / "target.txt"
    path = folder / "out.txt"
    if kind == "new":
        return path, path
    if kind == "file":
        path.write_text("stale\n" * 3)
        return path, path
    if kind == "link-to-file":
        target.write_text("stale\n")
        path.symlink_to(target)
        return path, target
    if kind == "link-to-link":
        target.write_text("stale\n")
        (folder / "middle").symlink_to(target)
        path.symlink_to(folder / "middle")
        return path, target
    if kind == "dangling-link":
        path.symlink_to(target)
        return path, target
    if kind == "link-to-new-folder":
        path.symlink_to(folder / "sub" / "target.txt")
        return path, folder / "sub" / "target.txt"
    if kind == "fifo":
        os.mkfifo(path)
        return path, None
    return Path(os.devnull), None


def read_fifo(path: Path, into: list) -> threading.Thread:
    thread = threading.Thread(target=lambda: into.append(path.read_bytes().decode("utf-8")), daemon=True)
    thread.start()
    return thread


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(KINDS), st.text(max_size=50))
def test_every_kind_of_path_gets_the_text_and_keeps_its_kind(tmp_path_factory, kind, text):
    folder = tmp_path_factory.mktemp("w")
    path, regular = make(kind, folder)
    was_link = path.is_symlink()
    got: list[str] = []
    reader = read_fifo(path, got) if kind == "fifo" else None
    atomic_write_text(path, text)
    if reader is not None:
        reader.join(timeout=10)
        assert got == [text] and stat.S_ISFIFO(path.lstat().st_mode)  # written through, still a FIFO
    elif regular is None:
        assert stat.S_ISCHR(path.stat().st_mode)  # /dev/null is still the device
    else:
        assert regular.read_bytes().decode("utf-8") == text and stat.S_ISREG(regular.lstat().st_mode)
        assert path.is_symlink() == was_link  # a link stays a link, pointing where it did
    assert not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]  # no temporary file left


def test_a_directory_is_an_error_naming_it(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "d")
    for path in (tmp_path / "d", tmp_path / "link"):
        with pytest.raises(IsADirectoryError, match=f"cannot write {path}: it is a directory"):
            atomic_write_text(path, "x")
    assert (tmp_path / "d").is_dir() and (tmp_path / "link").is_symlink() and not list((tmp_path / "d").iterdir())


def test_a_loop_of_links_and_a_socket_are_errors_naming_the_path(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(OSError, match=f"cannot write {tmp_path / 'a'}"):
        atomic_write_text(tmp_path / "a", "x")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s"))
        with pytest.raises(OSError, match=f"cannot write {tmp_path / 's'}"):
            atomic_write_text(tmp_path / "s", "x")
        assert stat.S_ISSOCK((tmp_path / "s").lstat().st_mode)  # not replaced by a file
    finally:
        sock.close()


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "private.txt"
    path.write_text("old")
    path.chmod(0o600)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_failed_write_to_a_link_keeps_the_target(tmp_path):
    (tmp_path / "t").write_text("old")
    (tmp_path / "l").symlink_to(tmp_path / "t")

    def fail(tmp: str) -> None:
        Path(tmp).write_text("partial")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match=f"cannot write {tmp_path / 'l'}: No space left on device"):
        atomic_write(tmp_path / "l", fail)
    assert (tmp_path / "t").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["l", "t"]


def test_dev_stdout_redirected_into_a_file_keeps_what_was_written_before(tmp_path):
    """``{ echo HEADER; tlite ... --output /dev/stdout; echo FOOTER; } > f`` once left NUL bytes where the
    header was: the output is appended to the stream, not written over it from the start."""
    import subprocess
    import sys

    write = "from transformers_lite.atomic import atomic_write_text; atomic_write_text('/dev/stdout', 'x\\n')"
    shell = f'{{ echo HEADER; {sys.executable} -c "{write}"; echo FOOTER; }} > {tmp_path / "f"}'
    subprocess.run(["sh", "-c", shell], check=True)
    assert (tmp_path / "f").read_bytes() == b"HEADER\nx\nFOOTER\n"


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm on this system")
def test_a_regular_file_under_dev_is_replaced_not_appended_to():
    """A file in ``/dev/shm`` is an ordinary file: writing it twice leaves the second text only (it was
    once appended to, as if it were a device)."""
    import tempfile

    with tempfile.TemporaryDirectory(dir="/dev/shm") as folder:
        path = Path(folder) / "out.jsonl"
        atomic_write_text(path, "first\n")
        atomic_write_text(path, "second\n")
        assert path.read_text() == "second\n" and stat.S_ISREG(path.stat().st_mode)


def _shape(value):
    return None if isinstance(value, dict) and all(isinstance(v, int) for v in value.values()) else "not counts"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=80) | st.text(max_size=80).map(str.encode))
def test_a_record_is_read_as_it_is_or_named_and_left_as_it_is(tmp_path, content):
    """``read_record``: the file's value when it parses and has the record's shape; else an error naming the
    file that says it was left as it is, and the file keeps every byte (a missing file is the empty record)."""
    from transformers_lite.atomic import read_record
    from transformers_lite.errors import RunError

    path = tmp_path / "record.json"
    path.unlink(missing_ok=True)  # one folder for every example
    assert read_record(path, "count record", _shape, dict) == {} and not path.exists()
    path.write_bytes(content)
    try:
        value = read_record(path, "count record", _shape, dict)
    except RunError as err:
        assert str(err).startswith(f"{path}: ") and "left as it is" in str(err)
    else:
        assert _shape(value) is None and json.loads(content.decode("utf-8")) == value
    assert path.read_bytes() == content

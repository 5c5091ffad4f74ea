"""Atomic file writes: write to a temporary file beside the target, fsync, then rename (and ``read_json``,
the checked read of what they wrote; ``read_record``, the one read of a small record that is read,
changed and written back).

A crash (or SIGKILL) in the middle of a save leaves either the old file or the new one, never a
truncated mix, because ``os.replace`` is atomic on POSIX file systems.

The rename only ever replaces a regular file (or creates a new one): whatever else the path names is
kept. A symbolic link is followed and its target written atomically (the link stays a link, and what
it points to gets the new content); a character or block device, FIFO or socket (``/dev/null``, a named
pipe) is opened and appended to, never replaced; a name of this process's own open files (``/dev/stdout``,
``/dev/fd/N``) is written through that descriptor, at its offset, so a redirected stdout is neither
truncated nor orphaned; a regular file anywhere (``/dev/shm`` too) is replaced atomically; a directory
is an error naming the path.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import RunError


def read_json(path: str | Path, what: str, error: type[Exception] = RunError, hint: str = "") -> Any:  # noqa: ANN401
    """The JSON value in the file ``path``: a missing file is a ``FileNotFoundError`` and one that does not
    parse an ``error``, each naming the path and ``what`` the file should be (``hint``: what to do)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise error(f"{path}: damaged {what}, not valid JSON ({err}){hint}") from None


KEEP = "fix it, or move it aside to start a new one"


def read_record(
    path: str | Path,
    what: str,
    shape: Callable[[Any], str | None],
    empty: Callable[[], Any],
    error: type[Exception] = RunError,
    what_to_do: str = KEEP,
) -> Any:  # noqa: ANN401
    """A small JSON record the project reads, changes and writes back (the exercises a learner has done, a
    run's manifest): ``empty()`` while the file does not exist; else its value, which must parse and pass
    ``shape`` (a function returning what is wrong with a value, or None).

    A file that cannot be read, does not parse or has another shape is an ``error`` naming the file and
    the problem, and ``what_to_do``; the file is left as it is: a fresh record in its place would be written over it at
    the next change, losing what it held (a hand-edited file with a trailing comma, its entries gone)."""
    path = Path(path)
    kept = f"; it was left as it is: {what_to_do}"
    if not os.path.lexists(path):
        return empty()
    if path.is_dir():
        raise error(f"{path}: {what} expected here, found a folder{kept}")
    value = read_json(path, what, error, hint=kept)
    problem = shape(value)
    if problem:
        raise error(f"{path}: damaged {what}: {problem}{kept}")
    return value


def atomic_write(path: str | Path, write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` then atomically move the temporary file onto ``path`` (or onto the file a
    symbolic link ``path`` points to). ``path`` naming a device, FIFO or socket, or one of this process's
    open files (``/dev/stdout``): the output is written through to it (no rename, no fsync).

    A write that fails (a full disk, a quota) leaves ``path`` as it was and raises an ``OSError``
    naming ``path``. A new file gets the permissions any new file would (0666 less the umask), not the
    private 0600 of a temporary file; a replaced file keeps its own.
    """
    path = Path(path)
    if _own_descriptor(path) is not None:  # /dev/stdout, /proc/self/fd/1, ...: this process's own, written through
        _write_in_place(path, path, write)
        return
    target, mode = _target(path)
    if mode is not None and not stat.S_ISREG(mode):
        _write_in_place(path, target, write)
        return
    tmp = ""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, mode & 0o777 if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as err:
        _remove(tmp)
        raise OSError(err.errno, f"cannot write {path}: {err.strerror or err}") from None
    except BaseException:
        _remove(tmp)
        raise
    _fsync_dir(target.parent)


def _target(path: Path) -> tuple[Path, int | None]:
    """``(the path to write, its st_mode or None when it does not exist yet)``, symbolic links resolved
    (a dangling link resolves to the file it names, which is then created)."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target, None
    except OSError as err:  # a loop of links, a parent that is a file, no permission
        raise OSError(err.errno, f"cannot write {path}: {err.strerror or err}") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"cannot write {path}: it is a directory; give a file name")
    return target, mode


def _write_in_place(path: Path, target: Path, write: Callable[[str], None]) -> None:
    """A device, FIFO or socket: written through, never replaced (a FIFO waits for its reader). The
    output is made in a temporary folder, then copied. A name of one of this process's open files
    (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``) is written through that descriptor, at its
    offset: reopening ``/dev/stdout`` redirected into a file (``{ echo HEADER; tlite ... --output
    /dev/stdout; echo FOOTER; } > f``) would truncate the file or write where the shell writes next."""
    try:
        with tempfile.TemporaryDirectory() as folder:
            made = os.path.join(folder, target.name or "output")
            write(made)
            with open(made, "rb") as source:
                fd = _own_descriptor(path)
                if fd is None:
                    with open(target, "ab") as sink:
                        shutil.copyfileobj(source, sink)
                    return
                for stream in (sys.stdout, sys.stderr):  # what this process printed before comes first
                    stream.flush()
                while chunk := source.read(1 << 16):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view) :]
    except OSError as err:
        raise OSError(err.errno, f"cannot write {path}: {err.strerror or err}") from None


def _own_descriptor(path: Path) -> int | None:
    """The descriptor number ``path`` names among this process's open files, or None."""
    text = os.path.abspath(path)
    named = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
    if text in named:
        return named[text]
    for prefix in ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/"):
        if text.startswith(prefix) and text[len(prefix) :].isdigit():
            return int(text[len(prefix) :])
    return None


def _remove(tmp: str) -> None:
    if not tmp:
        return
    try:
        os.unlink(tmp)
    except OSError:
        pass


@functools.cache
def _umask() -> int:
    mask = os.umask(0)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: str | Path, text: str) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    atomic_write(path, write)


def atomic_write_json(path: str | Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")

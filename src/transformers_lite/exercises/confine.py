"""What a check's child does to itself before it runs a learner's code: the confinement.

A learner's answer is untrusted input (it may have been pasted from anywhere, or sent to a server by
someone else). Before the answer's first line runs, the child that will run it:

* leaves the warden's session (``setsid``): its process group is its own, and ends with the check;
* keeps only three open files: nothing to read on standard input, its standard output and error
  captured by the warden, and the channel its results go back on (never the warden's own channel);
* works in an empty folder of its own, with an empty environment and no command line (``sys.argv``
  names no run, no server, no path);
* gives up root, when it has it, for the ``nobody`` user;
* is limited in CPU seconds (a loop that never ends is stopped), memory, open files, the size of any
  file it writes (0: it can write no file) and processes (none: it cannot start one);
* where the kernel has Landlock (Linux 5.13 and later), may read only the Python installation it runs
  from, write nowhere, open no TCP connection and, from Landlock's sixth version, signal no process
  outside its own.

Each measure is applied where the system has it, and ``confine`` says which were (``Confinement``), so
the docs and the checks can say what an answer could reach. Standard library only: the warden loads
this file by its path, without the package.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from dataclasses import dataclass, field

NOBODY = 65534

# Landlock (linux/landlock.h): system calls, rights and rule type
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULESET_VERSION = 1
_PATH_BENEATH = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_V1 = (1 << 13) - 1  # every right of the first version: execute, read, write, remove, make ...
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_PR_SET_NO_NEW_PRIVS = 38


@dataclass
class Confinement:
    """What ``confine`` applied: each measure's name, or why it could not be."""

    applied: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Limits:
    """What a check's child may use: CPU seconds, memory above what the warden held, open files."""

    cpu_s: float = 20.0
    memory_bytes: int = 4 << 30
    open_files: int = 64


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def landlock_version() -> int:
    """The kernel's Landlock version, 0 where it has none (or this is not Linux)."""
    libc = _libc()
    if libc is None or not sys.platform.startswith("linux"):
        return 0
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_RULESET_VERSION))
    return max(0, int(version))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _readable_roots() -> list[str]:
    """The folders a confined child may read: the Python installation and what its path names."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    roots.update(p for p in sys.path if p)
    out = []
    for root in roots:
        real = os.path.realpath(root)
        if os.path.isdir(real):
            out.append(real)
    return sorted(set(out))


def _landlock(version: int) -> list[str]:
    """Read-only Python, no writes, no TCP, no signals out: what Landlock ``version`` allows of that."""
    libc = _libc()
    if libc is None:
        return []
    fs = _FS_V1 | (_REFER if version >= 2 else 0) | (_TRUNCATE if version >= 3 else 0)
    fs |= _IOCTL_DEV if version >= 5 else 0
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if version >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if version >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(fs, net, scoped)
    size = 8 if version < 4 else 16 if version < 6 else 24
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        rules = [(root, _READ_FILE | _READ_DIR | _EXECUTE) for root in _readable_roots()]
        rules.append((os.devnull, _READ_FILE | _WRITE_FILE))
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = _PathBeneath(access, fd)
                if libc.syscall(_ADD_RULE, ruleset, ctypes.c_int(_PATH_BENEATH), ctypes.byref(rule), 0) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    done = ["files: read-only Python installation, no writes (Landlock)"]
    if net:
        done.append("no TCP connections (Landlock)")
    if scoped:
        done.append("no signals to processes outside the check (Landlock)")
    return done


def _vm_bytes() -> int:
    """This process's virtual memory now (the memory limit is counted above it)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_root(landlock: bool) -> str:
    """Root gives up its powers. With Landlock (which confines root's files too) it keeps its user id
    (its files stay readable where Landlock allows) and drops every capability, so the process limits
    bind it like anyone; without Landlock it becomes ``nobody``, so that it cannot write root's files."""
    libc = _libc()
    if landlock and libc is not None:
        header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
        data = (_CapData * 2)()
        if libc.capset(ctypes.byref(header), ctypes.byref(data)) == 0:
            return "root without any of root's capabilities"
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    return "runs as the user nobody, not root"


def _limit(name: str, value: int) -> None:
    what = getattr(resource, name)
    _, hard = resource.getrlimit(what)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(what, (value, value))


def confine(keep: int, workdir: str, limits: Limits) -> Confinement:
    """Confine this (child) process as the module docstring says; ``keep`` is the result channel's fd
    (it becomes fd 3), ``workdir`` the empty folder it works in."""
    done = Confinement()
    memory = _vm_bytes() + limits.memory_bytes
    version = landlock_version()
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(keep, 3)
    for fd in [int(n) for n in os.listdir("/proc/self/fd")] if os.path.isdir("/proc/self/fd") else range(4, 1024):
        if fd > 3:
            try:
                os.close(fd)
            except OSError:
                pass
    done.applied.append("no open files but its output and its result channel")
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update({"HOME": workdir, "TMPDIR": workdir, "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    sys.argv = ["answer.py"]
    done.applied.append("an empty folder, no environment, no command line")
    if os.geteuid() == 0:
        try:
            done.applied.append(_drop_root(bool(version)))
        except OSError as err:
            done.missing.append(f"still root (could not give it up: {err.strerror})")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size limit fails, not the process
    for name, value in (
        ("RLIMIT_FSIZE", 0),
        ("RLIMIT_NPROC", 0),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_NOFILE", limits.open_files),
        ("RLIMIT_AS", memory),
    ):
        try:
            _limit(name, value)
        except (OSError, ValueError, AttributeError):
            done.missing.append(f"no {name}")
    cpu = int(sum(os.times()[:2])) + max(1, int(limits.cpu_s + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    done.applied.append(
        f"at most {limits.cpu_s:g} s of CPU, {limits.memory_bytes >> 20} MiB more memory, no files written"
    )
    if version:
        try:
            done.applied += _landlock(version)
        except OSError as err:
            done.missing.append(f"no Landlock ({err})")
    else:
        done.missing.append("no Landlock in this kernel: the answer can read what its user can")
    return done

"""Error types, one per kind of failure; every message says what is wrong, where, and what to do.

All of them are ``ValueError`` subclasses, so code that catches ``ValueError`` keeps working. The CLI
prints any of them as one line, ``tlite: error: <message>``, and exits 1.

* ``ConfigError``: an impossible setting (a command-line option, a config or recipe field).
* ``DataError``: an input file that cannot be used as asked (bad record, empty split, ...).
* ``RunError``: a run directory that cannot be used (not a run, damaged, locked, mismatched).

Anything accepted but changed on the way (inputs cut to fit, records dropped) is reported with
``warn``: a ``TliteWarning`` that the CLI prints as one line, ``tlite: warning: <message>``.
"""

from __future__ import annotations

import errno
import warnings


class TliteError(ValueError):
    """Base class of the errors this package raises on purpose."""


class ConfigError(TliteError):
    """An impossible or contradictory setting."""


class DataError(TliteError):
    """An input file or text that cannot be used as asked."""


class RunError(TliteError):
    """A run directory that cannot be loaded, resumed or written."""


class TliteWarning(UserWarning):
    """Input accepted, but not exactly as given (cut, dropped, converted): always shown."""


def warn(message: str) -> None:
    warnings.warn(message, TliteWarning, stacklevel=2)


def os_error_text(err: OSError) -> str:
    """An ``OSError`` as one line naming its file(s) and what the system said: ``FILE: No space left on
    device``. One the project raised with its own words (the atomic writer's ``cannot write FILE: ...``)
    is kept as it is; the CLI prints this line and the inspector answers it (``server.app``)."""
    names = [_one_line(str(n)) for n in (err.filename, err.filename2) if n is not None]
    reason = err.strerror or (errno.errorcode.get(err.errno, "") if isinstance(err.errno, int) else "")
    if names and reason:
        return f"{' -> '.join(names)}: {reason}"
    if err.strerror:  # the project's own words (``cannot write FILE: ...``), without the [Errno N] prefix
        return _one_line(err.strerror)
    return _one_line(str(err)) or f"{type(err).__name__} (the system gave no reason)"


def _one_line(text: str) -> str:
    """``text`` with every character that is not printable (a line break in a file's name) escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)

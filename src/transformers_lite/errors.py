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

"""Progress bars: shown in a terminal and in a Jupyter notebook, silent when output goes to a file or a pipe.

In a notebook ``stderr`` is not a terminal, yet a user watching a cell wants the bar: the kernel's
shell is detected without importing IPython. With ``ipywidgets`` installed the bar is a widget,
otherwise tqdm's text bar, which Jupyter redraws in place as well.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's ``ZMQInteractiveShell``)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def interactive() -> bool:
    """Whether someone is watching: stderr is a terminal, or the code runs in a notebook."""
    return sys.stderr.isatty() or in_notebook()


def progress_bar(iterable: Iterable | None = None, **kwargs: Any) -> Any:  # noqa: ANN401
    """A tqdm bar on stderr: the notebook widget when one can be drawn, the text bar otherwise."""
    if in_notebook():
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm
        except ImportError:
            from tqdm import tqdm
    else:
        from tqdm import tqdm
    return tqdm(iterable, file=sys.stderr, **kwargs)

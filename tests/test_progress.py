"""Progress bars show where someone watches (a terminal, a Jupyter notebook) and stay out of files."""

import sys
import types

from transformers_lite.progress import in_notebook, interactive, progress_bar


def fake_jupyter(monkeypatch):
    ZMQInteractiveShell = type("ZMQInteractiveShell", (), {})  # the Jupyter kernel's shell class name
    shell = ZMQInteractiveShell()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))


def test_a_notebook_kernel_is_recognised_and_a_plain_ipython_or_pipe_is_not(monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython", None)
    assert not in_notebook()
    TerminalInteractiveShell = type("TerminalInteractiveShell", (), {})
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: TerminalInteractiveShell()))
    assert not in_notebook()
    fake_jupyter(monkeypatch)
    assert in_notebook() and interactive()


def test_training_in_a_notebook_draws_the_bar_on_stderr(monkeypatch, tmp_path, capsys):
    from transformers_lite import get_preset

    fake_jupyter(monkeypatch)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # no widgets: tqdm's text bar, redrawn in place
    (tmp_path / "t.txt").write_text("To be, or not to be, that is the question.\n" * 60)
    tiny = {"dim": 16, "n_heads": 2, "dim_hidden": 32, "n_blocks": 1, "max_length": 16}
    experiment = get_preset("baby-gpt").override(tiny, max_steps=6, batch_size=2, text=str(tmp_path / "t.txt"))
    experiment.run(tmp_path / "run", log=lambda *_: None)
    err = capsys.readouterr().err
    assert "epoch 1/1:" in err and "it/s" in err


def test_the_bar_counts_what_it_wraps(capsys):
    assert list(progress_bar(range(5), desc="work")) == [0, 1, 2, 3, 4]
    assert "work" in capsys.readouterr().err

"""The example notebooks run top to bottom (with TLITE_NOTEBOOK_QUICK=1: a few training steps each).

Each executes in a fresh Jupyter kernel in a temporary folder, with the real corpora from the shared data
folder; a notebook whose corpus is absent is skipped. Marked slow (about 40 s each): `make test-slow` runs them.
"""

import os
from pathlib import Path

import pytest

from ..conftest import DATA_DIR

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NEEDS = {
    "generator.ipynb": "tinyshakespeare/input.txt",
    "classifier.ipynb": "amazon_reviews_multi_en/train.jsonl",
    "translator.ipynb": "multi30k/train.de.gz",
    "backprop.ipynb": None,
    "exercises.ipynb": None,
}


def test_every_notebook_is_listed():
    assert {p.name for p in EXAMPLES.glob("*.ipynb")} == set(NEEDS)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NEEDS))
def test_notebook_runs_top_to_bottom(name, tmp_path, monkeypatch):
    needed = NEEDS[name]
    if needed and not (DATA_DIR / needed).exists():
        pytest.skip(f"real data not available: {DATA_DIR / needed}")
    monkeypatch.setenv("TLITE_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("TLITE_DATA_DIR", str(DATA_DIR))
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError, with the failing cell and its traceback, on any error
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images or name in ("backprop.ipynb", "exercises.ipynb"), "the notebook shows its plots"

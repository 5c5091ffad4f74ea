"""``tlite evaluate RUN --baseline``: a baseline fitted on the run's own training records, scored beside it."""

import json

import pytest

from transformers_lite.cli.main import main

from ..evaluation.test_baselines import table
from ..helpers import TINY_MODEL, sets

pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("baseline")
    data = table(folder / "notes.csv", 80)
    out = folder / "run"
    args = [*TINY_MODEL, *sets("members=1"), "--min-df", "1", "--embedding-init", "random", "--max-steps", "2"]
    args += ["--label-column", "category", "--out", str(out)]
    assert main(["train", "classifier", "--train", str(data), *args]) == 0
    return out, data


def test_the_baseline_is_fitted_on_the_runs_training_records_and_scored_on_its_validation_records(run, capsys):
    out, _ = run
    capsys.readouterr()
    assert main(["evaluate", str(out), "--baseline", "--json", "--no-plots"]) == 0
    result = json.loads(capsys.readouterr().out)
    recorded = json.loads((out / "hyperparameters.json").read_text())["data"]
    baseline = result["baseline"]
    assert baseline["baseline"] == "tfidf-svm" and baseline["n"] == result["n"] == recorded["val_records"] == 8
    assert baseline["train_records"] == recorded["train_records"] == 72
    assert baseline["accuracy"] == 1.0  # each class has its own words
    assert main(["evaluate", str(out), "--baseline", "majority", "--no-plots"]) == 0
    text = capsys.readouterr().out
    assert "baseline majority (always the most common training class; fitted on the run's 72 training" in text


def test_a_changed_training_file_is_named(run, tmp_path, capsys):
    out, data = run
    copy = tmp_path / "run"
    copy.mkdir()
    for f in out.iterdir():
        if f.is_file():
            (copy / f.name).write_bytes(f.read_bytes())
    hyper = json.loads((copy / "hyperparameters.json").read_text())
    changed = tmp_path / "notes.csv"
    changed.write_text(data.read_text() + '999,"one more note",tech\n')
    hyper["data"]["train"] = str(changed)
    (copy / "hyperparameters.json").write_text(json.dumps(hyper))
    assert main(["evaluate", str(copy), "--data", str(data), "--baseline", "--no-plots", "--trust-edited"]) == 1
    err = capsys.readouterr().err
    assert "--baseline fits on the training records of" in err and "changed since the run was trained" in err

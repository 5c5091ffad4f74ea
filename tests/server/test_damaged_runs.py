"""A damaged ``metrics.csv`` or ``history.json`` hides only the curves: the run panel still answers."""

import math
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformers_lite.runs.history import HistoryFileError, read_history, read_metrics

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
CSV_LIKE = st.lists(  # mostly tables, some of them damaged: more interesting than uniform bytes
    st.lists(st.sampled_from(["step", "train_loss", "1", "2.5", "", "nan", "inf", "x", '"', "\x00", "é"]), max_size=5),
    max_size=6,
).map(lambda rows: "\n".join(",".join(r) for r in rows).encode())


@pytest.fixture(scope="module")
def damaged(runs, tmp_path_factory):
    """A client over a copy of the generator run, whose record files the tests overwrite."""
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    run = tmp_path_factory.mktemp("damaged") / "gpt"
    shutil.copytree(runs / "generator", run)
    client = TestClient(create_app(RunRegistry(run), allowed_hosts=["testserver"]))
    return run, client, (run / "metrics.csv").read_bytes(), (run / "history.json").read_bytes()


def panel(client):
    response = client.get("/api/runs/gpt")
    assert response.status_code == 200, response.text
    info = response.json()
    assert info["parameters"] and info["config"]["family"] == "generator"  # the rest of the panel is there
    for curve in info["curves"].values():
        assert len(curve["step"]) == len(curve["value"]) > 0
        assert all(isinstance(x, (int, float)) and math.isfinite(x) for x in curve["step"] + curve["value"])
    return info


@FUZZ
@given(garbage=st.one_of(st.binary(max_size=200), CSV_LIKE))
def test_garbage_in_metrics_csv_leaves_the_run_panel_with_a_notice(damaged, garbage):
    run, client, _, history = damaged
    (run / "history.json").write_bytes(history)
    (run / "metrics.csv").write_bytes(garbage)
    info = panel(client)
    try:
        rows = read_metrics(run)
    except HistoryFileError as err:
        assert err.path.name == "metrics.csv" and str(run) in str(err)  # the command line names the file
        assert info["curves"] == {} and info["notices"] == [f"training curves not shown: metrics.csv {err.reason}"]
        assert str(run) not in str(info)  # the page never shows a path
    else:
        assert all(math.isfinite(r["step"]) for r in rows)
        if not rows:  # an empty table: the evaluations of history.json are shown instead
            assert "val_loss" in info["curves"]


@FUZZ
@given(garbage=st.one_of(st.binary(max_size=200), st.sampled_from([b"{}", b"[1]", b'[{"step": NaN}]', b"[" * 5000])))
def test_garbage_in_history_json_without_metrics_csv_leaves_the_run_panel(damaged, garbage):
    run, client, _, _ = damaged
    (run / "metrics.csv").unlink(missing_ok=True)
    (run / "history.json").write_bytes(garbage)
    info = panel(client)
    try:
        read_history(run)
    except HistoryFileError as err:
        assert info["curves"] == {} and info["notices"] == [f"training curves not shown: history.json {err.reason}"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("step,train_loss\n1,0.5\n2,oops\n", "line 3, column 'train_loss': 'oops' is not a number"),
        ("step,train_loss\n1,0.5,7\n", "line 2 has 3 cells, the header 2"),
        ("epoch,train_loss\n1,0.5\n", "has no 'step' column"),
        ("step,train_loss\n,0.5\n", "line 2: the step '' is not a number"),
        ('step,train_loss\n1,"0.5\n', "is not a CSV table"),
    ],
)
def test_a_damaged_metrics_csv_names_the_line_and_the_problem(tmp_path, text, reason):
    (tmp_path / "metrics.csv").write_text(text)
    with pytest.raises(HistoryFileError, match="metrics.csv: ") as err:
        read_metrics(tmp_path)
    assert reason in err.value.reason
    (tmp_path / "metrics.csv").write_bytes(b"step\n\xff\n")
    with pytest.raises(HistoryFileError, match=r"is not UTF-8 text \(byte 5 is 0xff\)"):
        read_metrics(tmp_path)


def test_values_that_are_no_finite_number_are_left_out_with_a_notice(damaged):
    run, client, metrics, history = damaged
    (run / "history.json").write_bytes(history)
    (run / "metrics.csv").write_text("step,train_loss\n1,0.5\n2,nan\n3,inf\n4,0.25\n")
    info = panel(client)
    assert info["curves"]["train_loss"] == {"step": [1.0, 4.0], "value": [0.5, 0.25]}
    assert info["notices"] == ["2 recorded values that are not finite numbers are left out of the curves"]
    (run / "metrics.csv").write_bytes(metrics)  # intact again: every curve, no notice
    info = panel(client)
    assert "train_loss" in info["curves"] and info["notices"] == []


def test_an_edited_run_is_refused_without_this_machines_paths(runs, tmp_path):
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    shutil.copytree(runs / "generator", tmp_path / "served" / "gpt")
    config = tmp_path / "served" / "gpt" / "config.json"
    config.write_text(config.read_text().replace('"causal": true', '"causal": false'))
    client = TestClient(create_app(RunRegistry(tmp_path / "served"), allowed_hosts=["testserver"]))
    for response in (client.get("/api/runs/gpt"), client.post("/api/runs/gpt/trace", json={"text": "To be"})):
        assert response.status_code == 400
        message = response.json()["error"]
        assert "gpt/config.json was changed" in message and str(tmp_path) not in message


@given(
    inside=st.lists(st.text("abc-_.", min_size=1, max_size=5).filter(lambda p: p not in (".", "..")), max_size=3),
    name=st.text("xyz_", min_size=1, max_size=6),
)
def test_public_text_keeps_paths_in_the_served_folder_relative_and_others_by_name(tmp_path_factory, inside, name):
    from transformers_lite.server.panel import public_text

    root = tmp_path_factory.mktemp("root")
    path = root.joinpath(*inside, name)
    relative = "/".join([*inside, name])
    assert public_text(f"{path}: damaged (see {path})", root) == f"{relative}: damaged (see {relative})"
    assert public_text(f"file /etc/{name}/x.json is gone", root) == "file x.json is gone"
    assert (
        public_text("3.5 steps/s at http://host/a and (C, T, B)", root) == "3.5 steps/s at http://host/a and (C, T, B)"
    )

"""The server's runs are what the folder holds at the moment of each request (``server/registry.py``):
runs created, deleted, renamed and given other weights while it serves, and run names that read as
routes."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file, save_file

from transformers_lite.runs.manifest import record

NAMES = ["a", "b", "more/c"]
BODIES = {"generator": ("next-token", {"context": "Before"}), "classifier": ("classify", {"text": "the box was good"})}


@pytest.fixture(scope="module")
def sources(runs, tmp_path_factory):  # noqa: F811
    """Runs to copy in (a generator, a classifier) and a second set of the generator's weights."""
    folder = tmp_path_factory.mktemp("variants")
    halved = {
        k: v * 0.5 if v.is_floating_point() else v
        for k, v in load_file(runs / "generator" / "model.safetensors").items()
    }
    save_file(halved, folder / "generator-halved.safetensors")
    return {
        "generator": runs / "generator",
        "classifier": runs / "classifier",
        "halved": folder / "generator-halved.safetensors",
    }


def app_over(folder):
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    return TestClient(create_app(RunRegistry(folder), allowed_hosts=["testserver"]))


def family_on_disk(run: Path) -> str | None:
    import json

    try:
        return json.loads((run / "config.json").read_text())["family"]
    except OSError:
        return None


def answer(client, method, path, body=None):
    response = client.request(method, path, json=body)
    return response.status_code, response.json()


def check_every_answer(served, folder, name):
    """The long-running server answers as a server started now on the folder would."""
    fresh = app_over(folder) if any(family_on_disk(folder / n) for n in NAMES) else None
    listed = answer(served, "GET", "/api/runs")
    assert listed == (answer(fresh, "GET", "/api/runs") if fresh else (200, {"runs": [], "refused": []}))
    family = family_on_disk(folder / name)
    action, body = BODIES.get(family or "generator")
    for method, path, payload in [("GET", f"/api/runs/{name}", None), ("POST", f"/api/runs/{name}/{action}", body)]:
        got = answer(served, method, path, payload)
        if family is None:  # deleted, renamed or never made: a 404 naming the run
            assert got[0] == 404 and repr(name) in got[1]["error"], got
        else:
            assert got == answer(fresh, method, path, payload)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.sampled_from(NAMES), st.sampled_from(["generator", "classifier"])),
        st.tuples(st.just("delete"), st.sampled_from(NAMES)),
        st.tuples(st.just("weights"), st.sampled_from(NAMES), st.sampled_from(["generator", "halved"])),
        st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
        st.tuples(st.just("request"), st.sampled_from(NAMES)),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=8)
@given(ops=OPS)
def test_every_answer_is_what_the_folder_holds_at_that_moment(sources, ops):
    folder = Path(tempfile.mkdtemp(dir=sources["halved"].parent))
    shutil.copytree(sources["generator"], folder / "a")
    served = app_over(folder)
    check_every_answer(served, folder, "a")
    for op, name, *rest in ops:
        run = folder / name
        if op == "create" and not run.exists():
            shutil.copytree(sources[rest[0]], run)
        elif op == "delete" and run.exists():
            shutil.rmtree(run)
        elif op == "weights" and family_on_disk(run) == "generator":
            weights = sources["generator"] / "model.safetensors" if rest[0] == "generator" else sources["halved"]
            shutil.copyfile(weights, run / "model.safetensors")  # in place: same size, same file
            record(run, ["model.safetensors"])  # a run as its trainer would leave it
        elif op == "rename" and run.exists() and not (folder / rest[0]).exists():
            (folder / rest[0]).parent.mkdir(exist_ok=True)
            os.rename(run, folder / rest[0])
        check_every_answer(served, folder, name)
    shutil.rmtree(folder)


def test_a_run_named_like_a_route_never_shadows_it(sources, tmp_path):
    """A run folder ``more/ROUTE`` beside the run ``more/gpt`` (or inside a run ``more``) is not served, and
    says why; every route of the runs beside it answers for them. A top-level run named ``ROUTE`` is served."""
    from transformers_lite.server import routes
    from transformers_lite.server.registry import RUN_ROUTES

    suffixes = {r.path.rsplit("/", 1)[1] for r in routes.router.routes if r.path.startswith("/api/runs/{name:path}/")}
    assert suffixes == set(RUN_ROUTES)
    shutil.copytree(sources["generator"], tmp_path / "more")
    shutil.copytree(sources["generator"], tmp_path / "other" / "gpt")
    for suffix in RUN_ROUTES:
        shutil.copytree(sources["classifier"], tmp_path / "more" / suffix)
        shutil.copytree(sources["classifier"], tmp_path / "other" / suffix)
        shutil.copytree(sources["classifier"], tmp_path / suffix)
    client = app_over(tmp_path)
    listed = client.get("/api/runs").json()
    assert {r["name"] for r in listed["runs"]} == {"more", "other/gpt", *RUN_ROUTES}
    assert {r["name"] for r in listed["refused"]} == {f"{f}/{s}" for f in ("more", "other") for s in RUN_ROUTES}
    for suffix in RUN_ROUTES:
        assert client.get(f"/api/runs/{suffix}").json()["family"] == "classifier"  # top level: its own
        assert client.post(f"/api/runs/{suffix}/classify", json={"text": "good"}).status_code == 200
        refused = client.get(f"/api/runs/other/{suffix}")  # never the info of the classifier in that folder
        assert refused.status_code in (404, 405, 422) and "classifier" not in refused.text
    assert client.get("/api/runs/more/timeline").json()["peers"]  # the route of the run ``more``
    assert client.get("/api/runs/more/embeddings").json()["points"]
    assert client.post("/api/runs/more/next-token", json={"context": "Before"}).status_code == 200
    assert "rename the folder" in client.get("/api/runs").json()["refused"][0]["reason"]


def started(source: Path, folder: Path) -> Path:
    """What a training has written by its first step: its settings, config, tokenizer and manifest."""
    folder.mkdir(parents=True)
    for name in ("hyperparameters.json", "config.json", "tokenizer.json", "manifest.json"):
        shutil.copy2(source / name, folder / name)
    return folder


def test_a_run_in_progress_is_served_from_what_it_has_written_so_far(sources, tmp_path):
    """While a process trains a run (it holds the run's lock) and its model cannot be loaded yet, the run is
    no damaged one: its panel answers (200) from its files so far, what it writes next is shown at the next
    request, the views that need a model say why (409), and its first checkpoint opens it."""
    from transformers_lite.runs.history import read_metrics
    from transformers_lite.training.rundir import RunLock

    done = sources["generator"]
    live = started(done, tmp_path / "live")
    client = app_over(tmp_path)
    finished = app_over(done).get("/api/runs/generator").json()
    with RunLock(live):
        entry = client.app.state.registry.entry("live")
        assert entry.run is None and "is still training and has no checkpoint yet" in entry.pending
        status, info = answer(client, "GET", "/api/runs/live")
        assert status == 200 and info["ready"] is False and info["family"] == "generator"
        for key in ("parameters", "total_trainable", "hyperparameters", "config", "preset"):
            assert info[key] == finished[key], key  # the settings and the parameter table of the run it becomes
        assert info["training"] == {"step": 0, "elapsed_s": 0.0, "total_steps": 4, "budget_s": None}
        assert info["curves"] == {} and "first checkpoint" in info["waiting"] and str(tmp_path) not in str(info)
        timeline = client.get("/api/runs/live/timeline").json()
        assert timeline["snapshots"] == [] and timeline["notices"][0].startswith("no training snapshot yet")

        # what it writes while it trains is what the next request shows
        rows = (done / "metrics.csv").read_text().splitlines()
        (live / "metrics.csv").write_text("\n".join(rows[:3]) + "\n")  # the header and two rows
        written = read_metrics(live)
        (live / "snapshots").mkdir()
        first = sorted((done / "snapshots").iterdir())[0]
        shutil.copy2(first, live / "snapshots" / first.name)
        info = client.get("/api/runs/live").json()
        assert (
            info["training"]["step"] == written[-1]["step"] and info["training"]["elapsed_s"] == written[-1]["wall_s"]
        )
        assert info["curves"]["train_loss"]["step"] == [r["step"] for r in written if r["train_loss"] is not None]
        assert [s["step"] for s in client.get("/api/runs/live/timeline").json()["snapshots"]] == [0]

        # what needs the model says why, without a path; the page asks for it only once ``ready``
        for method, path, body in [
            ("POST", "/api/runs/live/next-token", {"context": "Before"}),
            ("GET", "/api/runs/live/embeddings", None),
        ]:
            status, error = answer(client, method, path, body)
            assert status == 409 and "is training" in error["error"] and str(tmp_path) not in error["error"], error

        # its first checkpoint: the model loads while it still trains
        shutil.copytree(done / "checkpoint", live / "checkpoint")
        info = client.get("/api/runs/live").json()
        assert info["ready"] is True and info["waiting"] is None and info["training"]["total_steps"] == 4
        assert answer(client, "POST", "/api/runs/live/next-token", {"context": "Before"})[0] == 200
        # its record, rewritten every few seconds, is read afresh without loading the model again
        loaded = client.app.state.registry.entry("live").run
        (live / "metrics.csv").write_text("\n".join(rows) + "\n")
        assert client.get("/api/runs/live").json()["training"]["step"] == read_metrics(done)[-1]["step"]
        assert client.app.state.registry.entry("live").run is loaded
    assert client.get("/api/runs/live").json()["training"] is None  # the process let go: trained


def test_a_run_without_weights_is_waited_for_only_while_it_trains(sources, tmp_path):
    """The lock tells a run in progress from a damaged or stopped one: the same folder without a training
    process is the error naming the missing weights and how to train it from its settings; a file a
    training has not finished writing (final weights not yet in the manifest) is waited for, then named."""
    from transformers_lite.errors import RunError
    from transformers_lite.training.rundir import RunLock

    live = started(sources["generator"], tmp_path / "stopped")
    client = app_over(tmp_path)
    status, error = answer(client, "GET", "/api/runs/stopped")
    assert status == 400 and "model.safetensors (or a complete checkpoint) is missing" in error["error"]
    assert "tlite train --resume stopped" in error["error"] and "copy the whole run folder" not in error["error"]
    with pytest.raises(RunError, match="tlite train --resume"):
        client.app.state.registry.entry("stopped")

    shutil.copy2(sources["halved"], live / "model.safetensors")  # written, not yet recorded in the manifest
    with RunLock(live):
        status, info = answer(client, "GET", "/api/runs/stopped")
        assert status == 200 and info["ready"] is False and "model.safetensors" in info["waiting"]
        assert info["training"] is not None
    status, error = answer(client, "GET", "/api/runs/stopped")
    assert status == 400 and "model.safetensors" in error["error"]
    record(live, ["model.safetensors"])  # as the trainer does next
    assert client.get("/api/runs/stopped").json()["ready"] is True


def test_runs_compare_step_by_step_only_with_the_same_family_and_tokenizer(sources, tmp_path):
    from transformers_lite.server.registry import RunRegistry

    for name in ("a", "b", "c"):
        shutil.copytree(sources["generator"], tmp_path / name)
    shutil.copytree(sources["classifier"], tmp_path / "cls")
    tokenizer = tmp_path / "c" / "tokenizer.json"
    tokenizer.write_text(tokenizer.read_text() + " ")  # a tokenizer file that differs: not compared
    registry = RunRegistry(tmp_path)
    assert registry.peers("a") == ["b", "c"] and registry.comparable("a") == ["b"]
    assert registry.comparable("cls") == [] and registry.comparable("c") == []

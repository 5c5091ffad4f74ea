"""Every endpoint of the inspector's API, and every kind of bad request, over HTTP."""

import json
import math
import re
import threading
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

STATIC = Path(__file__).resolve().parents[2] / "src" / "transformers_lite" / "server" / "static"


def events(response):
    """Server-sent events as ``(event, data)`` pairs."""
    out = []
    for block in response.text.strip().split("\n\n"):
        event = re.search(r"^event: (.*)$", block, re.M).group(1)
        out.append((event, json.loads(re.search(r"^data: (.*)$", block, re.M).group(1))))
    return out


def test_runs_are_listed_with_their_family_also_in_sub_folders(client):
    runs = {r["name"]: r["family"] for r in client.get("/api/runs").json()["runs"]}
    assert runs == {"classifier": "classifier", "generator": "generator", "seq2seq": "seq2seq", "more/gpt": "generator"}
    info = client.get("/api/runs/more/gpt").json()
    assert info["family"] == "generator" and info["parameters"][0]["layer"].strip() == "embedding"
    assert info["hyperparameters"]["family"] == "generator" and "train_loss" in info["curves"]
    # no absolute path, command line or machine is published: a data file shows as its name
    assert "command" not in info["hyperparameters"] and "machine" not in info["hyperparameters"]
    assert not str(info["hyperparameters"]["data"]["text"]).startswith("/") and "path" not in info


def test_generation_streams_the_prompt_notices_tokens_and_done(client):
    response = client.post(
        "/api/runs/generator/generate", json={"prompt": "Before Zq", "max_new_tokens": 12, "seed": 2}
    )
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    got = events(response)
    assert got[0] == ("prompt", {"text": "Before Zq", "tokens": list("Before Zq"), "unknown": ["Z", "q"]})
    assert got[1][0] == "notice" and "never saw" in got[1][1]["message"]
    tokens = [d for e, d in got if e == "token"]
    assert len(tokens) == 12 and got[-1] == ("done", {"tokens": 12})
    again = [
        d
        for e, d in events(
            client.post("/api/runs/generator/generate", json={"prompt": "Before Zq", "max_new_tokens": 12, "seed": 2})
        )
        if e == "token"
    ]
    assert again == tokens  # the seed fixes the sample


def test_an_over_long_prompt_is_cut_with_a_notice(client):
    from transformers_lite.server.views import LIMITS

    got = events(
        client.post(
            "/api/runs/generator/generate", json={"prompt": "a" * (LIMITS.prompt_chars + 50), "max_new_tokens": 1}
        )
    )
    assert len(got[0][1]["text"]) == LIMITS.prompt_chars
    assert any(e == "notice" and "cut to its last" in d["message"] for e, d in got)


def test_inspection_endpoints(client):
    view = client.post("/api/runs/generator/next-token", json={"context": "Before"}).json()
    assert view["tokens"] == list("Before") and len(view["top"]) == 20
    assert all(t["p"] == t["model_p"] for t in view["top"]) and view["sampling"] == "temperature 1"


def test_next_token_bars_follow_the_sampling_settings(client):
    """The bars show what sampling draws from: p proportional to model_p ** (1 / T) over the top-k only."""
    body = {"context": "Before", "temperature": 0.5, "top_k": 3}
    view = client.post("/api/runs/generator/next-token", json=body).json()
    kept = [t for t in view["top"] if t["p"] > 0]
    assert len(kept) == 3 and abs(sum(t["p"] for t in kept) - 1) < 1e-4
    powered = [t["model_p"] ** 2 for t in kept]
    assert all(abs(t["p"] - w / sum(powered)) < 1e-3 for t, w in zip(kept, powered))
    assert view["sampling"] == "temperature 0.5, top-k 3"
    cls = client.post("/api/runs/classifier/classify", json={"text": "the box was awful"}).json()
    assert set(cls["probabilities"]) == {"1 star", "2 stars", "3 stars", "4 stars", "5 stars"}
    mt = client.post("/api/runs/seq2seq/translate", json={"text": "alpha beta", "beam": 2}).json()
    assert mt["source_tokens"][:2] == ["alpha", "beta"] and isinstance(mt["translation"], str)
    emb = client.get("/api/runs/classifier/embeddings?method=pca").json()
    assert len(emb["points"]) == len(emb["labels"]) > 0


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("get", "/api/runs/nope", None, 404, "no run named 'nope'; known: "),
        ("post", "/api/runs/nope/classify", {"text": "x"}, 404, "no run named 'nope'"),
        (
            "post",
            "/api/runs/classifier/generate",
            {"prompt": "a"},
            400,
            "holds a classifier model, which cannot generate",
        ),
        (
            "post",
            "/api/runs/generator/translate",
            {"text": "a"},
            400,
            "holds a generator model, which cannot translate",
        ),
        (
            "post",
            "/api/runs/generator/generate",
            {"prompt": ""},
            422,
            "prompt: String should have at least 1 character",
        ),
        (
            "post",
            "/api/runs/generator/generate",
            {"prompt": "a", "temperature": -1},
            422,
            "temperature: Input should be greater than 0",
        ),
        (
            "post",
            "/api/runs/generator/generate",
            {"prompt": "a", "max_new_tokens": 5000},
            422,
            "max_new_tokens: Input should be less than or equal to 1000",
        ),
        (
            "post",
            "/api/runs/generator/generate",
            {"prompt": "a", "top_p": 1.5},
            422,
            "top_p: Input should be less than or equal to 1",
        ),
        (
            "post",
            "/api/runs/generator/generate",
            {"prompt": "a", "seed": "x"},
            422,
            "seed: Input should be a valid integer",
        ),
        ("post", "/api/runs/generator/generate", {}, 422, "prompt: Field required"),
        ("post", "/api/runs/generator/next-token", {"context": 3}, 422, "context: Input should be a valid string"),
        ("post", "/api/runs/classifier/classify", {"text": "   "}, 400, "text: no word the model knows"),
        (
            "post",
            "/api/runs/seq2seq/translate",
            {"text": "alpha", "beam": 0},
            422,
            "beam: Input should be greater than or equal to 1",
        ),
        ("get", "/api/runs/generator/embeddings?method=umap", None, 422, "method: Input should be 'pca' or 'tsne'"),
        ("post", "/api/runs/generator/trace", {"text": "a", "switch_off": ["all"]}, 400, "'all': switch off"),
        ("post", "/api/runs/generator/trace", {"text": "a", "switch_off": ["x"] * 65}, 422, "switch_off: List should"),
        ("post", "/api/runs/classifier/trace", {"text": "   "}, 400, "text: no word the model knows"),
        ("post", "/api/runs/generator/trace", {"text": "a", "block": "blocks.9"}, 400, "model's blocks are"),
        ("post", "/api/runs/generator/sweep", {"text": "a"}, 400, "at least two tokens"),
    ],
    ids=lambda v: v if isinstance(v, str) and v.startswith("/") else None,
)
def test_bad_requests_are_json_errors_naming_the_problem(client, method, path, body, status, message):
    response = client.get(path) if method == "get" else client.post(path, json=body)
    assert response.status_code == status
    assert message in response.json()["error"]


def test_the_trace_endpoint_gives_every_step_of_each_family_and_what_a_switched_off_head_changes(client):
    body = client.post("/api/runs/generator/trace", json={"text": "First Citizen", "block": "blocks.0"}).json()
    names = [s["name"] for s in body["steps"]]
    assert body["blocks"] == ["blocks.0"]  # TINY_GPT: one block of two heads
    assert names[0] == "tokens" and "blocks.0.attention.weights" in names and names[-1] == "probabilities"
    weights = next(s for s in body["steps"] if s["name"] == "blocks.0.attention.weights")
    assert weights["axes"] == "(H, T, T)" and weights["post_axes"] == "(T, T, H)"  # self-attention: keys are the tokens
    assert weights["kind"] == "softmax" and weights["reads"] == ["blocks.0.attention.masked"]
    assert all(abs(sum(row) - 1) < 1e-3 for head in weights["values"] for row in head)
    assert body["tokens"] == list("First Citizen")
    off = client.post(
        "/api/runs/generator/trace", json={"text": "First Citizen", "switch_off": ["blocks.0.attention.head.0"]}
    ).json()
    heads = next(s for s in off["steps"] if s["name"] == "blocks.0.attention.heads")["values"]
    assert all(x == 0 for row in heads[0] for x in row)
    assert off["switched_off"]["largest_probability_change"] >= 0
    body = client.post("/api/runs/classifier/trace", json={"text": "the box was good"}).json()
    assert body["classes"] and body["steps"][-1]["name"] == "probabilities"
    body = client.post("/api/runs/seq2seq/trace", json={"text": "alpha beta", "target": "beta alpha"}).json()
    assert body["source_tokens"][:2] == ["alpha", "beta"] and body["tokens"][1:] == ["beta", "alpha"]
    cross = next(s for s in body["steps"] if s["name"] == "decoder.blocks.0.cross_attention.weights")
    assert cross["axes"] == "(H, T, S)"  # the target's tokens over the source's
    sweep = client.post("/api/runs/generator/sweep", json={"text": "First Citizen"}).json()
    assert len(sweep["heads"]) == 2 and sweep["loss"] > 0
    rises = [h["rise"] for h in sweep["heads"]]
    assert rises == sorted(rises, reverse=True)
    assert all(abs(h["loss"] - sweep["loss"] - h["rise"]) < 1e-4 for h in sweep["heads"])


def test_malformed_json_is_a_422_not_a_crash(client):
    response = client.post(
        "/api/runs/generator/generate", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422 and "error" in response.json()


def test_the_schema_page_and_static_files_are_served_with_nothing_from_the_network(client):
    schema = client.get("/openapi.json").json()
    assert {"/api/runs", "/api/runs/{name}/generate", "/api/runs/{name}/classify"} <= set(schema["paths"])
    page = client.get("/")
    assert page.status_code == 200 and "/static/js/main.js" in page.text and "/static/vendor/d3." in page.text
    modules = sorted(p.relative_to(STATIC).as_posix() for p in (STATIC / "js").glob("*.js"))
    for name in ("style.css", "vendor/LICENSE.d3.txt", *modules):
        answer = client.get(f"/static/{name}")
        assert answer.status_code == 200, name
        if name.endswith(".js"):
            assert "javascript" in answer.headers["content-type"]  # a module must be served as JavaScript
    for path in (p for p in STATIC.rglob("*") if p.is_file()):
        text = path.read_text()
        network = r"(src|href)=\"https?://|url\(https?:|import .* from \"https?:|fetch\(\"https?:"
        assert not re.search(network, text), path
        if path.parent.name == "js":  # modules import each other by relative path only
            assert all(m.startswith("./") for m in re.findall(r'^import .* from "([^"]+)"', text, re.M)), path


def test_concurrent_generations_all_finish(client):
    results = []

    def one(seed):
        got = events(
            client.post("/api/runs/generator/generate", json={"prompt": "A", "max_new_tokens": 50, "seed": seed})
        )
        results.append(got[-1])

    threads = [threading.Thread(target=one, args=(s,)) for s in range(5)]  # more than may run at once
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [("done", {"tokens": 50})] * 5


def test_serve_refuses_what_is_not_a_run_and_warns_on_a_public_address(runs_folder, tmp_path, monkeypatch, capsys):
    import uvicorn

    from transformers_lite.cli.main import main

    assert main(["serve", str(tmp_path / "nowhere")]) == 1
    assert "is not a run directory or a folder of runs" in capsys.readouterr().err
    assert main(["serve", str(tmp_path)]) == 1
    assert "holds no runs" in capsys.readouterr().err
    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.update(kw))
    assert main(["serve", str(runs_folder), "--host", "0.0.0.0", "--port", "8123"]) == 0
    out = capsys.readouterr()
    assert "it has no authentication" in out.err and "serving 4 run(s)" in out.out
    assert started == {"host": "0.0.0.0", "port": 8123, "log_level": "warning"}
    assert main(["serve", str(runs_folder)]) == 0
    assert "no authentication" not in capsys.readouterr().err and started["host"] == "127.0.0.1"


POSTS = {  # every POST endpoint: its text field and a number field (if any)
    "/api/runs/generator/generate": ("prompt", "seed"),
    "/api/runs/generator/next-token": ("context", None),
    "/api/runs/classifier/classify": ("text", None),
    "/api/runs/seq2seq/translate": ("text", "beam"),
    "/api/runs/generator/trace": ("text", None),
}
SURROGATE_TEXT = st.tuples(st.text(max_size=5), st.characters(categories=["Cs"]), st.text(max_size=5)).map("".join)


def refused_as_json(response):
    """A 4xx JSON error (never a plain-text 500) that does not carry the request's input back."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert all("input" not in d for d in body.get("detail", []))
    return body["error"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(sorted(POSTS)), text=SURROGATE_TEXT, other_field=st.booleans())
def test_a_lone_surrogate_in_any_post_body_is_a_json_4xx_naming_the_field(client, path, text, other_field):
    field, number = POSTS[path]
    other_field = other_field and number is not None
    body = {field: "a", number: text} if other_field else {field: text}
    raw = json.dumps(body).encode()  # ASCII: the surrogate travels as an escape like \ud800
    assert b"\\ud" in raw
    response = client.post(path, content=raw, headers={"Content-Type": "application/json"})
    message = refused_as_json(response)
    if other_field:
        assert message.startswith(f"{number}: ")  # a seed or beam that is no number
    else:
        assert message.startswith(f"{field}: not valid Unicode text") and response.status_code == 422


@pytest.mark.parametrize("path", sorted(POSTS))
@pytest.mark.parametrize(
    "raw",
    [b'{"x": "\\ud800"}', b'{"x": "\xed\xa0\x80"}', b'{"x": "\xff"}', b"\xff\xfe", b'{"x": "\\ud800'],
    ids=["escaped-surrogate", "utf8-surrogate", "stray-ff", "utf16-mark", "cut-off-escape"],
)
def test_unencodable_or_undecodable_bodies_are_json_4xx(client, path, raw):
    raw = raw.replace(b'"x"', f'"{POSTS[path][0]}"'.encode())
    refused_as_json(client.post(path, content=raw, headers={"Content-Type": "application/json"}))


def test_the_backward_endpoint(client):
    data = client.post("/api/runs/generator/backward", json={"text": "Before we", "position": 1}).json()
    assert data["steps"][0]["name"] == "logits" and data["loss"] > 0
    checked = [s for s in data["steps"] if "hand_max_diff" in s]
    assert len(checked) >= 10 and all(s["hand_max_diff"] < 1e-5 for s in checked)
    assert len(data["attribution"]) == len("Before we")
    bad = client.post("/api/runs/classifier/backward", json={"text": "the box", "target": "6 stars"})
    assert bad.status_code == 400 and "not one of the run's classes" in bad.json()["error"]


def test_the_logits_let_the_page_redraw_any_sampling_as_generation_computes_it(client):
    body = {"context": "Before", "temperature": 0.7, "top_k": 4}
    view = client.post("/api/runs/generator/next-token", json=body).json()
    logits = view["logits"]
    values = logits["values"]
    assert values == sorted(values, reverse=True) and values[0] == 0  # less their maximum, largest first
    assert len(values) == logits["vocabulary"] and logits["rest"] == 0  # a character model: every one
    kept = [v / 0.7 for v in values[:4]]
    total = sum(math.exp(v) for v in kept)
    for entry in view["top"][:4]:  # softmax(z / T) over the top-k: the probabilities generation draws from
        i = logits["tokens"].index(entry["token"])
        assert math.exp(kept[i]) / total == pytest.approx(entry["p"], abs=1e-4)


def test_one_step_names_its_rates_and_sgd_moves_each_weight_by_lr_times_its_gradient(client, runs_folder):
    import transformers_lite as tl

    body = {"text": "Before we", "position": 3}
    sgd = client.post("/api/runs/generator/step", json=body | {"optimizer": "sgd", "lr": 0.1}).json()
    assert sgd["lr"] == 0.1 and sgd["optimizer"].startswith("plain SGD") and sgd["loss_after"] < sgd["loss_before"]
    grads = tl.load(runs_folder / "generator").backward_trace("Before we", position=3).params
    for update in sgd["updates"]:
        assert update["norm"] == pytest.approx(0.1 * float(grads[update["name"]].norm()), rel=1e-4, abs=1e-7)
    adam = client.post("/api/runs/generator/step", json=body).json()
    recorded = tl.load(runs_folder / "generator").hyperparameters["train"]["lr"]
    assert adam["lr"] == adam["peak_lr"] == recorded and adam["optimizer"].startswith("AdamW")
    assert adam["end_lr"] is not None and 0 < adam["end_lr"] <= recorded
    assert adam["spectra"] == []
    bad = client.post("/api/runs/generator/step", json=body | {"optimizer": "lion"})
    assert bad.status_code == 422


def test_a_muon_step_shows_each_matrix_gradient_spectrum_beside_its_flat_update(client, runs_folder):
    import transformers_lite as tl
    from transformers_lite.training.optim import muon_matrix

    muon = client.post("/api/runs/generator/step", json={"text": "Before we", "optimizer": "muon"}).json()
    assert muon["optimizer"].startswith("Muon") and muon["loss_after"] < muon["loss_before"]
    model = tl.load(runs_folder / "generator").model
    assert {s["name"] for s in muon["spectra"]} == {n for n, p in model.named_parameters() if muon_matrix(n, p)}
    for s in muon["spectra"]:
        grad, update = torch.tensor(s["gradient"]), torch.tensor(s["update"])
        assert len(grad) == len(update) == min(s["shape"])
        # the gradient's values fall off by orders of magnitude; the update's stay within a band around 1
        big = grad > 1e-3 * grad[0]
        assert update[big].min() > 0.45 and update.max() < 1.25


def test_a_classifier_answers_with_every_members_attention(client, runs_folder):
    import transformers_lite as tl
    from transformers_lite.models.ensemble import classifier_members

    data = client.post("/api/runs/classifier/classify", json={"text": "the box was superb"}).json()
    members = classifier_members(tl.load(runs_folder / "classifier").model)
    assert len(data["members"]) == len(members) and data["received"] == data["members"][0]
    assert all(len(block) == members[0].config.n_blocks for block in data["members"])


def test_the_outline_is_every_step_in_forward_order(client, runs_folder):
    import transformers_lite as tl

    data = client.post("/api/runs/seq2seq/trace", json={"text": "alpha beta", "block": "encoder.blocks.0"}).json()
    traced = tl.load(runs_folder / "seq2seq").trace("alpha beta")
    assert [s["name"] for s in data["outline"]] == list(traced.tensors)
    assert {s["block"] for s in data["outline"]} == {"", *traced.blocks()}
    assert all(s["shape"] == list(traced[s["name"]].shape) for s in data["outline"])
    assert all("kind_meaning" in s for s in data["steps"])


@pytest.mark.parametrize(
    "family, body",
    [
        ("generator", {"text": "First Citizen"}),
        ("classifier", {"text": "the box was good"}),
        ("seq2seq", {"text": "alpha beta", "target": "beta alpha"}),
    ],
)
def test_each_steps_sentence_in_the_trace_json_agrees_with_its_equation(client, runs_folder, family, body):
    """What the walk's sentence says (``computes``) is this model's: the bias of each Dense as its equation
    has it, the Q/K/V remark on Q, K and V only, the activation and the norm it has; a step no post has
    says so in the posts' column."""
    import transformers_lite as tl
    from transformers_lite.layers.activations import ACTIVATIONS

    config = tl.load(runs_folder / family).config
    steps = client.post(f"/api/runs/{family}/trace", json=body).json()["steps"]
    assert steps
    for s in steps:
        says, ours, kind = s["computes"], s["equation"], s["kind"]
        assert says and "layers.norms" not in says and "activation:" not in says, s["name"]
        if kind == "projection" or kind.startswith("activation:"):
            assert ("no bias" in says) == (" + b" not in ours), (s["name"], says, ours)
            qkv = s["role"] in ("query", "key", "value")
            assert ("[Q; K; V]" in says) == qkv, (s["name"], says)
        if kind.startswith("activation:"):
            assert (
                kind == f"activation:{config.activation}"
                and f"nonlinearity {ACTIVATIONS[config.activation].written} " in says
            )
        if kind.startswith("norm:"):
            assert kind == f"norm:{config.norm}" and says.startswith(
                {"layer": "a layer norm", "rms": "an RMS norm"}[config.norm]
            )
        assert (s["post_equation"] == "not in the posts") == (not s["in_posts"]), s["name"]
        if s["in_posts"] and kind.startswith("norm:"):
            assert "/ (σ + ε)" in s["post_equation"], s["post_equation"]  # seed 000's layer norm


def test_the_timeline_endpoint(client, runs_folder):
    """Step 0 and the final evaluation of a four-step run, as written; the uniform guess is ln V."""
    import math

    from transformers_lite.runs.snapshots import read_timeline

    data = client.get("/api/runs/generator/timeline").json()
    steps = [s["step"] for s in data["snapshots"]]
    assert steps == [0, 4] and data["snapshots"] == read_timeline(runs_folder / "generator")
    first, last = data["snapshots"]
    assert len(first["token_losses"]) == len(first["tokens"]) - 1 and "val_loss" in last["scores"]
    assert data["uniform_loss"] == pytest.approx(math.log(len(first["embeddings"])))
    assert "update_norms" in last and not data["notices"]
    cls = client.get("/api/runs/classifier/timeline").json()
    assert len(cls["snapshots"][0]["probabilities"]) == 5 and cls["classes"][0] == "1 star"
    # the runs offered beside it: the other runs of its family, never itself
    assert data["peers"] == ["more/gpt"] and cls["peers"] == []
    assert client.get("/api/runs/more/gpt/timeline").json()["peers"] == ["generator"]
    # the runs its steps compare with: the same family and the same tokenizer (a copy here); the replay
    assert data["comparable"] == ["more/gpt"] and cls["comparable"] == []
    assert data["replay"]["steps"] == [0, 4] and len(data["replay"]["learned"]) == len(first["tokens"]) - 1


def test_a_run_that_is_still_training_is_shown_live(runs, tmp_path):  # noqa: F811
    """A run folder that appears after the server started is listed; while a process holds its lock and
    it has no final weights, its info says where training stands, and a newer checkpoint is loaded."""
    import shutil

    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry
    from transformers_lite.training.rundir import RunLock

    shutil.copytree(runs / "classifier", tmp_path / "done")
    client = TestClient(create_app(RunRegistry(tmp_path), allowed_hosts=["testserver"]))
    shutil.copytree(runs / "generator", tmp_path / "live")
    (tmp_path / "live" / "model.safetensors").unlink()  # not finished: the latest checkpoint is loaded
    assert [r["name"] for r in client.get("/api/runs").json()["runs"]] == ["done", "live"]
    assert client.get("/api/runs/live").json()["training"] is None  # nobody holds its lock: not training
    with RunLock(tmp_path / "live"):
        info = client.get("/api/runs/live").json()
        assert info["training"]["step"] == 4 and info["training"]["total_steps"] == 4
        assert info["training"]["elapsed_s"] >= 0 and info["training"]["budget_s"] is None
    assert client.get("/api/runs/live").json()["training"] is None


def test_the_sweep_over_validation_windows(client):
    data = client.post("/api/runs/generator/sweep", json={"text": "Before", "windows": 2}).json()
    assert data["windows"] == 2 and data["heads"][0]["rise"] >= data["heads"][-1]["rise"]
    bad = client.post("/api/runs/classifier/sweep", json={"text": "the box", "windows": 2})
    assert bad.status_code == 400 and "a generator's text" in bad.json()["error"]


def test_requests_of_every_kind_at_once_on_one_run_answer_as_one_at_a_time(client):
    """Two browser tabs on one run: trace, backward, one step, next-token bars and the run's page fired
    at once from several threads answer exactly as they do one at a time (nothing a request computes is
    kept on the shared model), and the server answers afterwards."""
    from concurrent.futures import ThreadPoolExecutor

    text = {"text": "First Citizen"}
    requests = [
        ("/api/runs/generator/trace", text | {"block": "blocks.0"}),
        ("/api/runs/generator/backward", text),
        ("/api/runs/generator/backward", text | {"position": 3}),
        ("/api/runs/generator/step", text | {"position": 2}),
        ("/api/runs/generator/next-token", {"context": "First Cit"}),
        ("/api/runs/classifier/backward", {"text": "the box was superb"}),
        ("/api/runs/seq2seq/backward", {"text": "alpha beta", "target": "beta alpha"}),
    ]
    alone = [client.post(path, json=body).json() for path, body in requests]
    with ThreadPoolExecutor(6) as pool:
        together = list(pool.map(lambda r: client.post(r[0], json=r[1]).json(), requests * 3))
    assert together == alone * 3
    assert client.get("/api/runs").status_code == 200


def test_try_it_yourself_checks_code_on_the_runs_tensors_and_never_answers_500(client, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    listed = client.get("/api/exercises").json()["exercises"]
    assert [e["name"] for e in listed][:2] == ["dense-forward", "dense-backward"]
    assert "def dense_backward(" in listed[1]["stub"]
    right = "def softmax_backward(p, dp):\n    return p * (dp - (dp * p).sum(-1, keepdim=True))\n"
    verdict = client.post("/api/runs/generator/exercise", json={"name": "softmax-backward", "code": right}).json()
    assert verdict["passed"] is True
    wrong = "def softmax_backward(p, dp):\n    return -p * (dp - (dp * p).sum(-1, keepdim=True))\n"
    verdict = client.post("/api/runs/generator/exercise", json={"name": "softmax-backward", "code": wrong}).json()
    assert verdict["passed"] is False and "flipped sign" in verdict["cause"]
    bad = client.post("/api/runs/generator/exercise", json={"name": "no-such", "code": right})
    assert bad.status_code == 400 and "no exercise 'no-such'" in bad.json()["error"]


@pytest.mark.parametrize("body", [None, b""])
def test_a_request_without_a_body_names_the_body_and_the_fields_it_needs(client, body):
    answer = client.post("/api/runs/classifier/classify", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error.startswith("body: the request has no JSON body") and "text" in error  # was ": Field required"


def test_each_exercise_says_which_steps_of_the_run_it_takes_its_tensors_from(client, runs_folder):
    """The page lights a wrong answer's cells on the map of the step the exercise checks: the answer names
    that step (the first Dense with a bias, the first attention's scaled scores, ...) and the tokens traced."""
    import transformers_lite as tl
    from transformers_lite.inspect.examples import example_inputs

    answer = client.get("/api/runs/generator/exercises").json()
    steps = answer["steps"]
    assert steps["dense-forward"] == ["blocks.0.attention.out"]
    assert steps["softmax-forward"] == ["blocks.0.attention.scaled"]
    assert steps["attention-forward"][:2] == ["blocks.0.attention.scores", "blocks.0.attention.heads"]
    assert steps["layer-norm-forward"][0].startswith("blocks.0.") and "norm" in steps["layer-norm-forward"][0]
    assert steps["block-forward"][0] == "blocks.0.attention.q"
    assert steps["swiglu-backward"][0] == "blocks.0.feed_forward.hidden"  # no gate: the feed-forward's own
    run = tl.load(runs_folder / "generator")
    assert answer["tokens"] == run.trace(example_inputs(run)["text"][:256]).tokens
    assert client.get("/api/runs/no-such/exercises").status_code == 404

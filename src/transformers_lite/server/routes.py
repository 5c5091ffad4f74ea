"""The inspector's JSON API under ``/api``, one route per view (the views are ``views``' functions):

* the runs: ``GET /api/runs``, ``GET /api/runs/NAME`` (parameter table, settings, curves),
  ``.../embeddings``, ``.../timeline``;
* what a family's runs do: ``POST .../generate`` (server-sent events), ``.../next-token``,
  ``.../classify``, ``.../translate``;
* one input through the model: ``POST .../trace``, ``.../sweep``, ``.../backward``, ``.../step``.

Each route finds its run in the server's registry (``request.app.state.registry``), which checks that the
run's folder still holds what it loaded; it answers 404 for an unknown or deleted run and 400 for a
request the run cannot serve (``ValueError`` from the library). A run that is training and cannot be
loaded yet (no checkpoint so far) is no error: ``GET /api/runs/NAME`` and ``.../timeline`` answer from
what its folder holds (``live``; ``ready`` false), the routes that need its model 409 saying why (the page
asks for them only once ``ready``). The last part of each route under ``/runs/NAME/`` is one of
``registry.RUN_ROUTES``, which no served run's name ends with.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from .. import exercises
from ..exercises.bounded import MAX_CODE, check_code
from ..exercises.sandbox import SandboxBusy
from ..exercises.source import source_of
from ..numbers import json_text
from ..pipeline import Run
from ..runs.loaded import read_config
from ..validate import SEED_MAX
from . import live, panel, views
from .registry import Entry, RunRegistry

L = views.LIMITS
router = APIRouter(prefix="/api")


class Body(BaseModel):
    """A request's JSON body. Every number in it is finite: Python's JSON reads ``NaN`` and ``Infinity``,
    and a NaN fails every comparison with a bound, so it would be refused as "should be <= 10"; it is
    refused as what it is, "should be a finite number"."""

    model_config = ConfigDict(allow_inf_nan=False)


class GenerateRequest(Body):
    prompt: str = Field(min_length=1, description="text to continue (longer than the limit: its end is kept)")
    max_new_tokens: int = Field(200, ge=1, le=L.max_new_tokens)
    temperature: float = Field(1.0, gt=0, le=10)
    top_k: int | None = Field(None, ge=1)
    top_p: float | None = Field(None, gt=0, le=1)
    seed: int = Field(0, ge=0, le=SEED_MAX)


class ContextRequest(Body):
    context: str = Field(min_length=1, description="the text before the token to explain")
    temperature: float = Field(1.0, gt=0, le=10, description="the sampling settings the bars follow")
    top_k: int | None = Field(None, ge=1)
    top_p: float | None = Field(None, gt=0, le=1)


class TextRequest(Body):
    text: str = Field(min_length=1)


class TranslateRequest(Body):
    text: str = Field(min_length=1)
    beam: int = Field(1, ge=1, le=8)


class TraceRequest(Body):
    text: str = Field(min_length=1, description="a prompt, a review, or a translator's source")
    target: str | None = Field(None, min_length=1, description="a translator's target (default: its translation)")
    switch_off: list[str] = Field([], max_length=64, description="heads, units or 'position' to switch off")
    block: str | None = Field(None, max_length=200, description="the steps outside blocks and this block's only")
    position: int = Field(-1, ge=-100_000, le=100_000, description="where the logit lens reads (-1: the last token)")
    windows: int = Field(0, ge=0, le=32, description="a sweep of a generator over this many validation windows")
    seed: int | None = Field(None, ge=0, le=SEED_MAX, description="with a seed: a question for every step")


class BackwardRequest(Body):
    text: str = Field(min_length=1, description="a text to predict, a review, or a translator's source")
    target: str | None = Field(None, min_length=1, description="a class name, or a translator's reference")
    position: int | None = Field(None, ge=0, le=100_000, description="a generator: the one position whose loss")


class StepRequest(BackwardRequest):
    optimizer: Literal["adamw", "muon", "sgd"] = Field(
        "adamw", description="AdamW or Muon from a fresh state, or plain SGD"
    )
    lr: float | None = Field(None, gt=0, le=10, description="the learning rate (default: the run's peak)")


def _registry(request: Request) -> RunRegistry:
    registry: RunRegistry = request.app.state.registry
    return registry


def _lookup(request: Request, name: str) -> Entry:
    """The registry's entry of run ``name``: loaded, or ``pending`` while it trains; else the HTTP error."""
    try:
        return _registry(request).entry(name)
    except KeyError as err:
        raise HTTPException(404, err.args[0]) from None
    except ValueError as err:  # a damaged run: say why
        raise HTTPException(400, str(err)) from None


def _entry(request: Request, name: str, action: str | None = None) -> Entry:
    """The registry's entry of run ``name`` (loaded), or the HTTP error saying why not."""
    found = _lookup(request, name)
    if found.run is None:  # the registry loads a run when it is asked for: one still training has no model yet
        raise HTTPException(409, f"run {name!r} is training and its model cannot be loaded yet: {found.pending}")
    if action and action not in found.run.family.actions:
        raise HTTPException(400, f"run {name!r} holds a {found.family} model, which cannot {action}")
    return found


def _run(request: Request, name: str, action: str | None = None) -> Run:
    run = _entry(request, name, action).run
    assert run is not None  # _entry answers 400 for a run that did not load
    return run


def _answer(request: Request, name: str, view: Callable[..., Any], *args: Any, action: str | None = None) -> Any:  # noqa: ANN401
    """``view(run, *args)`` for run ``name``; a ``ValueError`` (a request this run cannot serve) is a 400."""
    run = _run(request, name, action)
    try:
        return view(run, *args)
    except ValueError as err:
        raise HTTPException(400, str(err)) from None


# ---------------------------------------------------------------- the runs
@router.get("/runs")
def runs(request: Request) -> dict[str, Any]:
    """The runs this server shows, with their model family, as the folder holds them now (runs started
    since are added, deleted ones dropped), and ``refused``: run folders whose name would read as a route."""
    registry = _registry(request)
    registry.refresh()
    return {
        "runs": [{"name": e.name, "family": e.family} for e in list(registry.entries.values())],
        "refused": [{"name": name, "reason": why} for name, why in registry.refused.items()],
    }


@router.get("/runs/{name:path}/embeddings")
def embeddings(request: Request, name: str, method: Literal["pca", "tsne"] = "pca") -> dict[str, Any]:
    """A 2-D map of the token embeddings with each point's token."""
    return _answer(request, name, panel.embedding_view, method)


@router.get("/runs/{name:path}/timeline")
def timeline(request: Request, name: str) -> dict[str, Any]:
    """The run's training snapshots (step 0 and each evaluation; so far, for a run still training), the
    loss of a uniform guess and ``peers``: the other runs of its family, whose timelines can be shown
    beside it (``comparable``: those of them with the same tokenizer, whose steps compare step by step)."""
    entry = _lookup(request, name)
    try:
        found = panel.timeline_view(entry.path, entry.run.config if entry.run else read_config(entry.path))
    except ValueError as err:
        raise HTTPException(400, str(err)) from None
    registry = _registry(request)
    registry.refresh()
    return {**found, "peers": registry.peers(name), "comparable": registry.comparable(name)}


# ---------------------------------------------------------------- what a family's runs do
@router.post("/runs/{name:path}/generate")
def generate(request: Request, name: str, body: GenerateRequest) -> StreamingResponse:
    """Server-sent events: ``prompt`` (the prompt as read: ``text``, its ``tokens`` as the run's
    tokenizer cuts it, ``unknown`` characters), a
    ``notice`` per change made to it, one ``token`` per generated token (``{"id", "text"}``), then
    ``done`` (or ``error``)."""
    run = _run(request, name, "generate")
    try:
        prompt = views.prepare_prompt(run, body.prompt)
    except ValueError as err:
        raise HTTPException(400, str(err)) from None
    sampling = {"temperature": body.temperature, "top_k": body.top_k, "top_p": body.top_p}
    return StreamingResponse(
        _stream(run, prompt, body.max_new_tokens, sampling, body.seed, request.app.state.gate),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post("/runs/{name:path}/next-token")
def next_token(request: Request, name: str, body: ContextRequest) -> dict[str, Any]:
    """The next-token probabilities after a context and every block's and head's attention over it."""
    sampling = (body.temperature, body.top_k, body.top_p)
    return _answer(request, name, views.next_token_view, body.context, *sampling, action="next-token")


@router.post("/runs/{name:path}/classify")
def classify(request: Request, name: str, body: TextRequest) -> dict[str, Any]:
    """Predicted class, probabilities, and the attention each word receives per block and head."""
    return _answer(request, name, views.classify_view, body.text, action="classify")


@router.post("/runs/{name:path}/translate")
def translate(request: Request, name: str, body: TranslateRequest) -> dict[str, Any]:
    """The translation and the cross-attention of every decoder block and head."""
    return _answer(request, name, views.translate_view, body.text, body.beam, action="translate")


# ---------------------------------------------------------------- one input through the model
@router.post("/runs/{name:path}/trace")
def trace(request: Request, name: str, body: TraceRequest) -> dict[str, Any]:
    """Every step of one forward pass (name, kind, shape ours and the posts', equation, meaning, what it
    read, values), the logit lens and the heads' attention distance."""
    return _answer(request, name, views.trace_view, body)


@router.post("/runs/{name:path}/sweep")
def sweep(request: Request, name: str, body: TraceRequest) -> dict[str, Any]:
    """Each head switched off in turn: how much the loss on the input rises, heads ranked."""
    return _answer(request, name, views.sweep_view, body.text, body.target, body.windows)


@router.post("/runs/{name:path}/backward")
def backward(request: Request, name: str, body: BackwardRequest) -> dict[str, Any]:
    """The loss of one example and the gradient at every step back to the embeddings, every parameter's
    gradient norm, hand-derived gradients beside autograd's, and gradient x input per token."""
    return _answer(request, name, views.backward_view, body)


class ExerciseRequest(Body):
    name: str = Field(min_length=1, max_length=64, description="an exercise, as `tlite exercise list` names it")
    code: str = Field(min_length=1, max_length=MAX_CODE, description="Python defining the exercise's function")


@router.get("/exercises")
def exercise_list(request: Request, run: str | None = None) -> dict[str, Any]:
    """The exercises in order, each with its statement, the file a learner edits, and its hints; asked
    with ``?run=NAME``, the checker is made ready for that run meanwhile (its sandbox started, the run's
    forward pass traced), so the first check costs only the learner's function."""
    sandbox = request.app.state.sandbox
    if sandbox is not None:
        entry = None
        if run is not None:
            try:
                entry = _registry(request).entry(run)
            except (KeyError, ValueError):
                entry = None
        loaded = entry.run if entry is not None else None
        threading.Thread(target=_warm, args=(sandbox, loaded), daemon=True).start()
    return {
        "code": request.app.state.code_policy,
        "exercises": [
            {"name": e.name, "title": e.title, "part": e.part, "posts": e.posts, "ours": e.ours, "asked": e.asked}
            | {"statement": e.statement(), "shapes": e.shapes, "stub": e.stub(), "hints": list(e.hints)}
            for e in exercises.EXERCISES
        ],
    }


def _warm(sandbox: Any, run: Run | None) -> None:  # noqa: ANN401 - a Sandbox
    try:
        sandbox.start()
        if run is not None:
            source_of(run)
    except Exception:  # noqa: BLE001, S110 - a warm-up only: the check itself reports any failure
        pass


@router.post("/runs/{name:path}/exercise")
def exercise_check(request: Request, name: str, body: ExerciseRequest) -> dict[str, Any]:
    """The learner's code for one exercise checked on this run's tensors: the code runs confined in the
    sandbox, which receives only the step's tensors (never the run's path or files) and sends back only
    what the function returned; the verdict is formed here (a loop, an error or a wrong shape is a
    verdict, never a 500). Off (403) where the server listens beyond this machine without --allow-code."""
    sandbox = request.app.state.sandbox
    if sandbox is None:
        raise HTTPException(403, request.app.state.code_policy)
    run = _run(request, name)
    if body.name not in exercises.path.BY_NAME:
        raise HTTPException(400, f"no exercise {body.name!r}; the exercises: {', '.join(exercises.path.BY_NAME)}")
    try:
        verdict = check_code(exercises.exercise(body.name), body.code, run, sandbox)
    except SandboxBusy as err:
        raise HTTPException(429, str(err)) from None
    if verdict.passed:
        exercises.progress.record(body.name, passed=True)
    return verdict.to_dict()


@router.get("/runs/{name:path}/exercises")
def exercise_steps(request: Request, name: str) -> dict[str, Any]:
    """Where each exercise takes its tensors on this run: ``steps`` (per exercise, the steps it reads, in
    the order it looks them up; empty where the model computes none of them) and ``tokens`` (and a
    translator's ``source_tokens``), the input they were traced on (the run's example), so the page can
    light a wrong answer's cells on the map of the step it checks, and say which step that is."""
    run = _run(request, name)
    source = source_of(run)
    steps = {e.name: source.steps_of(e) for e in exercises.EXERCISES}
    return {"tokens": source.tokens, "source_tokens": source.source_tokens, "steps": steps}


@router.post("/runs/{name:path}/step")
def step(request: Request, name: str, body: StepRequest) -> dict[str, Any]:
    """One optimizer step on this example, on a copy of the model: the loss before and after, the
    probabilities that moved most and how far each parameter moved. The run is not changed."""
    example = {"target": body.target, "position": body.position, "optimizer": body.optimizer, "lr": body.lr}
    return _answer(request, name, lambda r: r.take_step(body.text, **example))


@router.get("/runs/{name:path}")
def run_info(request: Request, name: str) -> dict[str, Any]:
    """Parameter table, hyperparameters, training curves and config of a run, ``training``: where a run
    still training stands, ``ready``: whether its model is loaded (``waiting``: why not yet), and
    ``comparable``: the runs whose steps compare with its own (its family, the same tokenizer)."""
    entry = _lookup(request, name)
    registry = _registry(request)
    try:
        if entry.run is None:
            return live.waiting_info(name, entry.path, entry.pending or "", registry.root)
        return panel.run_info(name, entry.run) | {"comparable": registry.comparable(name)}
    except ValueError as err:
        raise HTTPException(400, str(err)) from None


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json_text(data)}\n\n"


def _stream(
    run: Run,
    prompt: dict[str, Any],
    max_new_tokens: int,
    sampling: dict[str, Any],
    seed: int,
    gate: threading.BoundedSemaphore,
) -> Iterator[str]:
    """Generation in its own thread feeding a queue, at most ``gate``'s count at a time: a slow reader only
    slows itself, and a reader that goes away stops its generation."""
    yield _sse("prompt", {"text": prompt["text"], "tokens": prompt["tokens"], "unknown": prompt["unknown"]})
    for notice in prompt["notices"]:
        yield _sse("notice", {"message": notice})
    items: queue.Queue = queue.Queue()
    cancelled = threading.Event()

    def work() -> None:
        with gate:
            try:
                count = 0
                for token in views.stream_tokens(run, prompt["text"], max_new_tokens, seed=seed, **sampling):
                    if cancelled.is_set():
                        break
                    items.put(("token", token))
                    count += 1
                items.put(("done", {"tokens": count}))
            except Exception as err:  # noqa: BLE001 - reported to the page, never a silent stop
                items.put(("error", {"error": f"{type(err).__name__}: {err}"}))
        items.put(None)

    threading.Thread(target=work, daemon=True, name="tlite-generate").start()
    try:
        while (item := items.get()) is not None:
            yield _sse(*item)
    finally:
        cancelled.set()  # the client went away: stop generating for it

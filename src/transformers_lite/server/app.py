"""The inspector's web application: a JSON API under ``/api`` (OpenAPI schema at ``/openapi.json``),
server-sent events for streamed generation, and the static page.

Every error is JSON ``{"error": message}``: 404 for an unknown run, 400 for a request the run cannot
serve (a classifier asked to generate, a text with nothing to read), 422 naming the field for a
malformed request (never echoing the input: it may be what cannot be encoded, a lone surrogate), 421
for a request naming another host (``hosts``: the DNS-rebinding guard, checked before any route).
Generation runs in its own thread feeding a queue, at most
``Limits.concurrent_generations`` at a time (others wait their turn): a slow reader only slows itself.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..validate import SEED_MAX
from ..version import __version__
from . import views
from .hosts import HostCheck, allowed_host_names
from .registry import Entry, RunRegistry

STATIC = Path(__file__).with_name("static")
L = views.LIMITS


class GenerateRequest(BaseModel):
    prompt: str = Field(min_length=1, description="text to continue (longer than the limit: its end is kept)")
    max_new_tokens: int = Field(200, ge=1, le=L.max_new_tokens)
    temperature: float = Field(1.0, gt=0, le=10)
    top_k: int | None = Field(None, ge=1)
    top_p: float | None = Field(None, gt=0, le=1)
    seed: int = Field(0, ge=0, le=SEED_MAX)


class ContextRequest(BaseModel):
    context: str = Field(min_length=1, description="the text before the token to explain")
    temperature: float = Field(1.0, gt=0, le=10, description="the sampling settings the bars follow")
    top_k: int | None = Field(None, ge=1)
    top_p: float | None = Field(None, gt=0, le=1)


class TextRequest(BaseModel):
    text: str = Field(min_length=1)


class TranslateRequest(BaseModel):
    text: str = Field(min_length=1)
    beam: int = Field(1, ge=1, le=8)


class TraceRequest(BaseModel):
    text: str = Field(min_length=1, description="a prompt, a review, or a translator's source")
    target: str | None = Field(None, min_length=1, description="a translator's target (default: its translation)")
    switch_off: list[str] = Field([], max_length=64, description="heads, units or 'position' to switch off")
    block: str | None = Field(None, max_length=200, description="the steps outside blocks and this block's only")
    position: int = Field(-1, ge=-100_000, le=100_000, description="where the logit lens reads (-1: the last token)")
    windows: int = Field(0, ge=0, le=32, description="a sweep of a generator over this many validation windows")


class BackwardRequest(BaseModel):
    text: str = Field(min_length=1, description="a text to predict, a review, or a translator's source")
    target: str | None = Field(None, min_length=1, description="a class name, or a translator's reference")
    position: int | None = Field(None, ge=0, le=100_000, description="a generator: the one position whose loss")


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def _encodable(value: Any) -> Any:  # noqa: ANN401 - any JSON value
    """``value`` with every string made UTF-8-encodable (a lone surrogate becomes the text ``\\ud800``)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, (list, tuple)):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    return value


def _error(status: int, message: str, **extra: Any) -> JSONResponse:  # noqa: ANN401
    return JSONResponse(status_code=status, content=_encodable({"error": message, **extra}))


def _problem(error: dict[str, Any]) -> str:
    if error["type"] == "string_unicode":  # pydantic's words for a lone surrogate (U+D800..U+DFFF)
        return "not valid Unicode text (a lone surrogate such as \\ud800 is no character); send UTF-8 text"
    return error["msg"]


def create_app(registry: RunRegistry, host: str = "127.0.0.1", allowed_hosts: Iterable[str] = ()) -> FastAPI:
    """The inspector over ``registry``'s runs, answering requests whose ``Host`` names ``host`` (the
    address it listens on; loopback names too when that is loopback or every interface) or one of
    ``allowed_hosts``."""
    app = FastAPI(title="transformers-lite inspector", version=__version__)
    app.add_middleware(HostCheck, allowed=allowed_host_names(host, allowed_hosts))
    gate = threading.BoundedSemaphore(L.concurrent_generations)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        # location, message and kind only: never the input back (the caller has it; it may not encode)
        detail = [{"loc": list(e["loc"]), "msg": _problem(e), "type": e["type"]} for e in exc.errors()]
        field = ".".join(str(x) for x in detail[0]["loc"] if x != "body") if detail else "body"
        message = detail[0]["msg"] if detail else "invalid request"
        return _error(422, f"{field}: {message}", field=field, detail=detail)

    @app.exception_handler(StarletteHTTPException)  # FastAPI's own too (a body that is not UTF-8, a bad route)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = views.public_text(exc.detail, registry.root) if isinstance(exc.detail, str) else exc.detail
        return _error(exc.status_code, detail)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:  # a bug: still JSON
        return _error(500, f"internal error: {type(exc).__name__} (the server's log has the traceback)")

    def entry(name: str, action: str | None = None) -> Entry:
        try:
            found = registry.entry(name)
        except KeyError as err:
            raise HTTPException(404, err.args[0]) from None
        except ValueError as err:  # a damaged run: say why
            raise HTTPException(400, str(err)) from None
        if found.run is None:  # the registry loads a run when it is asked for
            raise HTTPException(400, f"run {name!r} could not be loaded")
        if action and action not in found.run.family.actions:
            raise HTTPException(400, f"run {name!r} holds a {found.family} model, which cannot {action}")
        return found

    def answer(found: Entry, fn: Any, *args: Any) -> dict[str, Any]:  # noqa: ANN401
        try:
            return fn(found.run, *args)
        except ValueError as err:
            raise HTTPException(400, str(err)) from None

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/runs")
    def runs() -> dict[str, Any]:
        """The runs this server shows, with their model family (runs started since are added)."""
        registry.refresh()
        return {"runs": [{"name": e.name, "family": e.family} for e in registry.entries.values()]}

    @app.get("/api/runs/{name:path}/embeddings")
    def embeddings(name: str, method: Literal["pca", "tsne"] = "pca") -> dict[str, Any]:
        """A 2-D map of the token embeddings with each point's token."""
        return answer(entry(name), views.embedding_view, method)

    @app.post("/api/runs/{name:path}/generate")
    def generate(name: str, request: GenerateRequest) -> StreamingResponse:
        """Server-sent events: ``prompt`` (the prompt as read: ``text``, ``unknown`` characters), a
        ``notice`` per change made to it, one ``token`` per generated token (``{"id", "text"}``), then
        ``done`` (or ``error``)."""
        found = entry(name, "generate")
        assert found.run is not None  # entry() answers 400 for a run that did not load
        try:
            prompt = views.prepare_prompt(found.run, request.prompt)
        except ValueError as err:
            raise HTTPException(400, str(err)) from None
        sampling = {"temperature": request.temperature, "top_k": request.top_k, "top_p": request.top_p}
        return StreamingResponse(
            _stream(found, prompt, request.max_new_tokens, sampling, request.seed, gate),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.post("/api/runs/{name:path}/next-token")
    def next_token(name: str, request: ContextRequest) -> dict[str, Any]:
        """The next-token probabilities after a context and every block's and head's attention over it."""
        sampling = (request.temperature, request.top_k, request.top_p)
        return answer(entry(name, "next-token"), views.next_token_view, request.context, *sampling)

    @app.post("/api/runs/{name:path}/classify")
    def classify(name: str, request: TextRequest) -> dict[str, Any]:
        """Predicted class, probabilities, and the attention each word receives per block and head."""
        return answer(entry(name, "classify"), views.classify_view, request.text)

    @app.post("/api/runs/{name:path}/translate")
    def translate(name: str, request: TranslateRequest) -> dict[str, Any]:
        """The translation and the cross-attention of every decoder block and head."""
        return answer(entry(name, "translate"), views.translate_view, request.text, request.beam)

    @app.post("/api/runs/{name:path}/trace")
    def trace(name: str, request: TraceRequest) -> dict[str, Any]:
        """Every step of one forward pass (name, shape ours and the posts', equation, meaning, values)."""
        return answer(entry(name), views.trace_view, request)

    @app.post("/api/runs/{name:path}/sweep")
    def sweep(name: str, request: TraceRequest) -> dict[str, Any]:
        """Each head switched off in turn: how much the loss on the input rises, heads ranked."""
        return answer(entry(name), views.sweep_view, request.text, request.target, request.windows)

    @app.post("/api/runs/{name:path}/backward")
    def backward(name: str, request: BackwardRequest) -> dict[str, Any]:
        """The loss of one example and the gradient at every step back to the embeddings, every parameter's
        gradient norm, hand-derived gradients beside autograd's, and gradient x input per token."""
        return answer(entry(name), views.backward_view, request)

    @app.get("/api/runs/{name:path}/timeline")
    def timeline(name: str) -> dict[str, Any]:
        """The run's training snapshots (step 0 and each evaluation), the loss of a uniform guess and
        ``peers``: the other runs of its family, whose timelines can be shown beside it."""
        found = entry(name)
        registry.refresh()
        return {**answer(found, views.timeline_view), "peers": registry.peers(name)}

    @app.post("/api/runs/{name:path}/step")
    def step(name: str, request: BackwardRequest) -> dict[str, Any]:
        """One optimizer step on this example, on a copy of the model: the loss before and after, and
        the probabilities that moved most. The run is not changed."""
        found = entry(name)
        return answer(found, lambda r: r.take_step(request.text, target=request.target, position=request.position))

    @app.get("/api/runs/{name:path}")
    def run(name: str) -> dict[str, Any]:
        """Parameter table, hyperparameters, training curves and config of a run."""
        found = entry(name)
        return answer(found, lambda r: views.run_info(name, r))

    return app


def _stream(
    found: Entry,
    prompt: dict[str, Any],
    max_new_tokens: int,
    sampling: dict[str, Any],
    seed: int,
    gate: threading.BoundedSemaphore,
) -> Iterator[str]:
    yield _sse("prompt", {"text": prompt["text"], "unknown": prompt["unknown"]})
    for notice in prompt["notices"]:
        yield _sse("notice", {"message": notice})
    items: queue.Queue = queue.Queue()
    cancelled = threading.Event()
    run = found.run
    assert run is not None  # entry() answers 400 for a run that did not load

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

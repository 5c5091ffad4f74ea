"""The inspector's web application: the static page, and the JSON API under ``/api`` (its routes are
``routes``; OpenAPI schema at ``/openapi.json``), with server-sent events for streamed generation.

Every error is JSON ``{"error": message}``: 404 for an unknown run, 400 for a request the run cannot
serve (a classifier asked to generate, a text with nothing to read), 409 for a view that needs the model
of a run still training before its first checkpoint, 422 naming the field for a malformed request
(never echoing the input: it may be what cannot be encoded, a lone surrogate), 421 for a request naming
another host (``hosts``: the DNS-rebinding guard, checked before any route). Generation runs in its own
thread feeding a queue, at most
``Limits.concurrent_generations`` at a time (others wait their turn): a slow reader only slows itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import os_error_text
from ..exercises.sandbox import Sandbox
from ..numbers import printable
from ..version import __version__
from . import panel, routes, views
from .hosts import HostCheck, allowed_host_names, code_policy, reachable_from_elsewhere
from .registry import RunRegistry

STATIC = Path(__file__).with_name("static")


def _encodable(value: Any) -> Any:  # noqa: ANN401 - any JSON value
    """``value`` with every string made UTF-8-encodable (a lone surrogate becomes the text ``\\ud800``)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, (list, tuple)):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    return value


class FiniteJSONResponse(JSONResponse):
    """JSON in which a number too large for a float is written in words (``numbers.printable``): plain
    ``JSONResponse`` refuses ``inf`` and the answer was a 500."""

    def render(self, content: Any) -> bytes:  # noqa: ANN401 - any JSON value
        return super().render(printable(content))


def _error(status: int, message: str, **extra: Any) -> JSONResponse:  # noqa: ANN401
    return FiniteJSONResponse(status_code=status, content=_encodable({"error": message, **extra}))


def _problem(error: dict[str, Any]) -> str:
    if error["type"] == "string_unicode":  # pydantic's words for a lone surrogate (U+D800..U+DFFF)
        return "not valid Unicode text (a lone surrogate such as \\ud800 is no character); send UTF-8 text"
    return error["msg"]


def _fields(request: Request) -> str:
    """`` with the fields ...`` of the body the request's route reads, or ``""`` when it cannot be told."""
    body = getattr(request.scope.get("route"), "body_field", None)
    model = getattr(getattr(body, "field_info", None), "annotation", None) or getattr(body, "type_", None)
    fields = getattr(model, "model_fields", None)
    if not isinstance(fields, dict) or not fields:
        return ""
    required = [name for name, info in fields.items() if info.is_required()]
    return f" with the fields {', '.join(fields)}" + (f" ({', '.join(required)} required)" if required else "")


def create_app(
    registry: RunRegistry, host: str = "127.0.0.1", allowed_hosts: Iterable[str] = (), allow_code: bool = False
) -> FastAPI:
    """The inspector over ``registry``'s runs, answering requests whose ``Host`` names ``host`` (the
    address it listens on; loopback names too when that is loopback or every interface) or one of
    ``allowed_hosts``. The exercises, which run code a request sends, are on where ``host`` is this
    machine only, or with ``allow_code`` (``code_policy`` says which, in words)."""
    app = FastAPI(title="transformers-lite inspector", version=__version__, default_response_class=FiniteJSONResponse)
    app.add_middleware(HostCheck, allowed=allowed_host_names(host, allowed_hosts))
    app.state.registry = registry  # what the routes read (``routes``)
    app.state.gate = threading.BoundedSemaphore(views.LIMITS.concurrent_generations)  # generations at once
    local = not reachable_from_elsewhere(host)
    app.state.sandbox = Sandbox() if local or allow_code else None  # started when the exercises are opened
    app.state.code_policy = code_policy(host, local, allow_code)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        # location, message and kind only: never the input back (the caller has it; it may not encode)
        detail = [{"loc": list(e["loc"]), "msg": _problem(e), "type": e["type"]} for e in exc.errors()]
        field = (".".join(str(x) for x in detail[0]["loc"] if x != "body") if detail else "") or "body"
        message = detail[0]["msg"] if detail else "invalid request"
        if field == "body" and detail and detail[0]["type"] == "missing":  # no body at all: say what it holds
            message = f"the request has no JSON body; send a JSON object{_fields(request)}"
        return _error(422, f"{field}: {message}", field=field, detail=detail)

    @app.exception_handler(StarletteHTTPException)  # FastAPI's own too (a body that is not UTF-8, a bad route)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = panel.public_text(exc.detail, registry.root) if isinstance(exc.detail, str) else exc.detail
        return _error(exc.status_code, detail)

    @app.exception_handler(OSError)  # a file the request needed could not be read or written: named
    async def os_error(request: Request, exc: OSError) -> JSONResponse:
        status = 404 if isinstance(exc, FileNotFoundError) else 403 if isinstance(exc, PermissionError) else 409
        return _error(status, panel.public_text(os_error_text(exc), registry.root))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:  # a bug: still JSON
        return _error(500, f"internal error: {type(exc).__name__} (the server's log has the traceback)")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    app.include_router(routes.router)
    return app

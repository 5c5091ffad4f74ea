"""Explore runs in the browser: generate, classify, translate, attention maps.

Start a local web app for a run directory (or a folder of runs: a picker lists them). Generator:
streamed generation, next-token bars and every head's attention at any token. Classifier:
prediction and the attention each word receives. Translator: translation and cross-attention. Every
run: parameter table, training curves, hyperparameters, embedding map.

    tlite serve outputs --port 8000   (then open http://127.0.0.1:8000)
"""

# FastAPI and uvicorn are core dependencies, imported only when the server starts (they take half a second to import).

from __future__ import annotations

import argparse

from ..errors import warn
from .common import command


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument("runs", help="a run directory, or a folder holding run directories")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests addressed to this host name (repeatable); others are refused, so that no "
        "web page can reach the inspector through a name of its own (DNS rebinding)",
    )
    p.add_argument(
        "--allow-code",
        action="store_true",
        help="with a --host other machines can reach: let the exercises run the code requests send (off by "
        "default there; always on when only this machine can reach the server)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..server.app import create_app  # FastAPI: imported once a server is started
    from ..server.hosts import reachable_from_elsewhere
    from ..server.registry import RunRegistry

    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be in 1..65535, got {args.port}")
    registry = RunRegistry(args.runs)
    app = create_app(registry, host=args.host, allowed_hosts=args.allowed_host, allow_code=args.allow_code)
    if reachable_from_elsewhere(args.host):
        warn(
            f"--host {args.host} makes the inspector reachable from other machines (by IP address; a host name "
            "needs --allowed-host NAME); it has no authentication"
        )
    if reachable_from_elsewhere(args.host) or args.allow_code:
        print(app.state.code_policy)
    names = registry.names()
    print(f"serving {len(names)} run(s) from {args.runs} at http://{args.host}:{args.port}  (Ctrl-C to stop)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0

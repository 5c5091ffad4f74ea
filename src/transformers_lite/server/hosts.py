"""The inspector answers only requests addressed to itself: a check of the HTTP ``Host`` header.

Any web page can make a browser send requests to ``127.0.0.1``. With DNS rebinding (a name of the
page's own that first resolves to its server, then to ``127.0.0.1``) it can even read the answers,
since to the browser they come from the page's own origin. The ``Host`` header still carries that
name, so refusing every name but the server's own closes the door.

Allowed: the address the server listens on; ``127.0.0.1``, ``localhost`` and ``[::1]`` when that
address is loopback or every interface (``0.0.0.0``, ``::``); any IP address when it is every
interface (a rebinding page always names a domain, never an address); and the names given with
``--allowed-host``. Any port is accepted (an SSH tunnel or a proxy changes the port, not the name).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..errors import ConfigError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
ANY_ADDRESS = "<any IP address>"  # in an allowed set: every IP literal is answered
_NAME = re.compile(r"^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)$")  # a host name, IPv4 or bracketed IPv6 address

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]


def host_name(value: str) -> str:
    """The name of a ``Host`` header or ``--host`` value, lowercased, without its port, IPv6 in
    brackets: ``"LocalHost:8000"`` -> ``"localhost"``, ``"[::1]:80"`` and ``"::1"`` -> ``"[::1]"``."""
    value = value.strip().lower()
    if value.count(":") > 1 and not value.startswith("["):  # a bare IPv6 address: no port without brackets
        return f"[{value}]"
    end = value.find("]") + 1 if value.startswith("[") else len(value.split(":", 1)[0])
    name, port = value[:end], value[end:]
    return name if port == "" or (port[0] == ":" and port[1:].isdigit()) else value  # an odd port: kept whole


def _is(address: str, kind: str) -> bool:
    try:
        return getattr(ipaddress.ip_address(address.strip("[]")), kind)
    except ValueError:
        return address == "localhost" and kind == "is_loopback"


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
        return True
    except ValueError:
        return False


def allowed_host_names(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` names a server listening on ``bound`` answers (see the module docstring); an
    ``extra`` name that is not a host name is a ``ConfigError`` naming it."""
    names = {host_name(bound)}
    if _is(host_name(bound), "is_loopback") or _is(host_name(bound), "is_unspecified"):
        names.update(LOOPBACK_NAMES)
    if _is(host_name(bound), "is_unspecified"):
        # every interface: any address of this machine (an IP literal); DNS rebinding needs a name
        names.add(ANY_ADDRESS)
    for value in extra:
        name = host_name(value)
        if not _NAME.match(name):
            raise ConfigError(f"--allowed-host {value!r} is not a host name (give a name or address, like example.org)")
        names.add(name)
    return frozenset(names)


def refusal(host: str) -> dict[str, str]:
    """The JSON body of a refused request, naming the host and, when there is one, the option that
    allows it: only a value ``--allowed-host`` takes (a host name or address, with a numeric port or
    none), so the advice always works."""
    shown = host_name(host)
    if not host:
        message = "the request has no Host header; this server answers only requests naming its own host"
    elif _NAME.match(shown):
        message = f"host {shown!r} is not allowed; tlite serve --allowed-host {shown} allows it"
    else:
        message = (
            f"host {host.strip()[:100]!r} is not allowed: it is not a host name or address with a numeric port "
            "(like example.org:8000), so no --allowed-host allows it; address the server by its name"
        )
    return {"error": message, "detail": message}


class HostCheck:
    """ASGI middleware: a request whose ``Host`` is not in ``allowed`` gets 421 (Misdirected Request)
    with ``refusal``'s JSON body, before any route sees it."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan events name no host
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
        name = host_name(host)
        if host and (name in self.allowed or (ANY_ADDRESS in self.allowed and _is_address(name))):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # policy violation
            return
        body = json.dumps(refusal(host)).encode()  # ASCII: any odd byte in the header comes back escaped
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 421, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def reachable_from_elsewhere(host: str) -> bool:
    """Whether a server listening on ``host`` can be reached from other machines (not loopback; a host
    name is assumed reachable)."""
    name = host_name(host).strip("[]")
    if name == "localhost":
        return False
    try:
        return not ipaddress.ip_address(name).is_loopback
    except ValueError:
        return True


def code_policy(host: str, local: bool, allow_code: bool) -> str:
    """One line on whether the exercises' code runs on this server, and why."""
    if local:
        return "the exercises run code sent to this server, which only this machine can reach"
    if allow_code:
        return (
            f"--allow-code: anyone who can reach {host} can run Python code on this machine (confined: it gets "
            "only an exercise's tensors, writes no file, starts no process)"
        )
    return (
        f"the exercises are off: this server listens on {host}, so anyone who can reach it could run code on "
        "this machine; start it with --allow-code to allow that"
    )

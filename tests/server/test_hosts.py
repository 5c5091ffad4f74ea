"""The inspector answers only requests naming its own host (the DNS-rebinding guard), on every path."""

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from transformers_lite.errors import ConfigError
from transformers_lite.server.hosts import allowed_host_names, host_name

PATHS = ["/api/runs", "/api/runs/generator", "/", "/static/js/main.js", "/openapi.json"]
PORTS = st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}"))
LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
NAMES = st.one_of(
    st.lists(LABEL, min_size=1, max_size=4).map(".".join),  # evil.example, localhost.evil, 127.0.0.1.nip ...
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    st.sampled_from(["localhost.", "127.0.0.2", "0.0.0.0", "[::2]", "testserver.evil", "LOCALHOST.evil"]),
)


@pytest.fixture(scope="module")
def served(runs_folder):
    """A client for an app as ``tlite serve`` builds it by default: bound to 127.0.0.1, nothing added."""
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    return TestClient(create_app(RunRegistry(runs_folder)), base_url="http://127.0.0.1:8000")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, port=PORTS, path=st.sampled_from(PATHS))
def test_a_host_not_allowed_is_refused_on_every_path_with_the_option_that_allows_it(served, name, port, path):
    assume(name not in ("127.0.0.1", "localhost", "[::1]"))  # allowed: checked below
    name = name.lower()
    response = served.get(path, headers={"Host": name + port})
    assert response.status_code == 421
    assert response.json()["detail"] == f"host {name!r} is not allowed; tlite serve --allowed-host {name} allows it"
    assert response.json()["error"] == response.json()["detail"]  # what the page shows


def test_a_refused_post_never_reaches_the_model(served):
    response = served.post("/api/runs/generator/next-token", json={"context": "Be"}, headers={"Host": "evil.example"})
    assert response.status_code == 421 and "evil.example" in response.json()["error"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["127.0.0.1", "localhost", "LocalHost", "[::1]"]),
    port=PORTS,
    path=st.sampled_from(PATHS),
)
def test_loopback_names_on_any_port_are_answered(served, name, port, path):
    assert served.get(path, headers={"Host": name + port}).status_code == 200


def test_allowed_hosts_are_answered_and_only_they(runs_folder):
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    app = create_app(RunRegistry(runs_folder), host="0.0.0.0", allowed_hosts=["Box.Lan", "10.1.2.3:8000"])
    client = TestClient(app, base_url="http://box.lan:8000")
    # bound to every interface, any IP address is this machine's (a rebinding page names a domain)
    for host in ("box.lan", "BOX.LAN:80", "10.1.2.3", "0.0.0.0:8000", "localhost:9000", "10.1.2.4", "[fe80::1]"):
        assert client.get("/api/runs", headers={"Host": host}).status_code == 200, host
    for host in ("other.lan", "box.lan.evil", "box.lan:port", ""):
        assert client.get("/api/runs", headers={"Host": host}).status_code == 421, host
    # bound to one outside address, loopback names are not that server's names
    public = TestClient(create_app(RunRegistry(runs_folder), host="192.168.1.5"))
    assert public.get("/api/runs", headers={"Host": "192.168.1.5:8000"}).status_code == 200
    assert public.get("/api/runs", headers={"Host": "localhost:8000"}).status_code == 421
    assert public.get("/api/runs", headers={"Host": "192.168.1.6:8000"}).status_code == 421


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("LocalHost:8000", "localhost"),
        ("[::1]:80", "[::1]"),
        ("::1", "[::1]"),
        ("example.org", "example.org"),
        ("example.org:x", "example.org:x"),  # an odd port keeps the whole value: it matches no name
        ("[::1]junk", "[::1]junk"),
    ],
)
def test_host_names_drop_the_port_and_bracket_ipv6(value, name):
    assert host_name(value) == name


def test_an_allowed_host_that_is_no_host_name_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"--allowed-host 'a b' is not a host name"):
        allowed_host_names("127.0.0.1", ["a b"])
    assert allowed_host_names("::1") == {"127.0.0.1", "localhost", "[::1]"}


def test_serve_passes_allowed_hosts_to_the_app(runs_folder, monkeypatch, capsys):
    import uvicorn
    from fastapi.testclient import TestClient

    from transformers_lite.cli.main import main

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    assert main(["serve", str(runs_folder), "--allowed-host", "box.lan", "--allowed-host", "tunnel.example"]) == 0
    client = TestClient(served["app"])
    for host, status in [("box.lan", 200), ("tunnel.example:443", 200), ("127.0.0.1:8000", 200), ("evil.lan", 421)]:
        assert client.get("/api/runs", headers={"Host": host}).status_code == status, host
    assert main(["serve", str(runs_folder), "--allowed-host", "a/b"]) == 1
    assert "tlite: error: --allowed-host 'a/b' is not a host name" in capsys.readouterr().err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    host=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=24)
    | st.builds(lambda n, p: f"{n}:{p}", NAMES, st.text("abcxyz0123456789-:", min_size=1, max_size=6))
)
def test_a_refusal_advises_only_an_allowed_host_that_would_allow_the_request(served, runs_folder, host):
    """The advice of a refused request is a value ``--allowed-host`` takes, and with it the same request is
    answered; a Host that no option allows (``127.0.0.1:abc``, a port that is no number) is told so."""
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    response = served.get("/api/runs", headers={"Host": host})
    if response.status_code != 421:
        return
    message = response.json()["error"]
    advised = re.search(r"tlite serve --allowed-host (\S+) allows it$", message)
    if advised is None:
        assert "so no --allowed-host allows it" in message, message
        with pytest.raises(ConfigError):
            allowed_host_names("127.0.0.1", [host])
        return
    app = create_app(RunRegistry(runs_folder), allowed_hosts=[advised.group(1)])
    assert TestClient(app).get("/api/runs", headers={"Host": host}).status_code == 200, message


def test_a_host_with_a_port_that_is_no_number_is_told_no_option_allows_it(served):
    response = served.get("/api/runs", headers={"Host": "127.0.0.1:abc"})
    assert response.status_code == 421
    assert (
        "'127.0.0.1:abc' is not allowed: it is not a host name or address with a numeric port"
        in (response.json()["error"])
    )

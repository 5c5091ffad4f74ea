"""A tiny trained run of each family (shared with the reliability tests) and the app serving them."""

import shutil

import pytest

from ..reliability.conftest import files, runs  # noqa: F401 - fixtures reused here

pytest.importorskip("fastapi")


@pytest.fixture(scope="session")
def runs_folder(runs, tmp_path_factory):  # noqa: F811
    """The three runs, plus a nested folder (a run two levels down is found too)."""
    folder = tmp_path_factory.mktemp("served")
    for name in ("generator", "classifier", "seq2seq"):
        shutil.copytree(runs / name, folder / name)
    shutil.copytree(runs / "generator", folder / "more" / "gpt")
    return folder


@pytest.fixture(scope="session")
def client(runs_folder):
    from fastapi.testclient import TestClient

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    # TestClient names the host "testserver"; the app answers it only because it is allowed here
    return TestClient(create_app(RunRegistry(runs_folder), allowed_hosts=["testserver"]))

"""Shared fixtures: deterministic seeds and the location of the shared real data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# property tests check behaviour, not speed: no per-example deadline on a busy 2-core CI machine
settings.register_profile("ci", deadline=None)
settings.load_profile("ci")

DATA_DIR = Path(os.environ.get("TLITE_DATA_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield


def shared_data(*parts: str) -> Path:
    """Path into ../shared/data, or skip the test with a clear reason when it is absent."""
    path = DATA_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent (set TLITE_DATA_DIR or place ../shared/data)")
    return path


def _binary(value: object) -> bool:
    return isinstance(value, bytes) and any(not (32 <= b < 127 or b in b"\t\n\r") for b in value)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse test ids built from binary bytes: they can hide values that differ per process.

    pytest-xdist collects the suite once per worker and stops when the ids differ; a gzip header
    (which holds the time it was written) once made them differ by one second. Readable ids
    (``ids=`` on the parametrize) keep every worker's collection the same.
    """
    unreadable = [
        item.nodeid
        for item in items
        if "\\x" in item.nodeid
        and any(_binary(v) for v in getattr(item, "callspec", None) and item.callspec.params.values() or ())
    ]
    if unreadable:
        raise pytest.UsageError(f"test ids hold binary bytes; give the parametrize readable ids=: {unreadable[:3]}")

"""The documentation site builds offline and strictly: every page in the navigation, every link between
pages and every API reference resolves (mkdocs --strict fails on the first that does not)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly_with_the_api_reference(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "backward_trace" in api and "take_step" in api  # the reference comes from the docstrings
    assert (tmp_path / "site" / "own-data" / "index.html").is_file()


def test_a_broken_link_between_pages_fails_the_build(tmp_path):
    pytest.importorskip("mkdocs")
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")  # the repository's address, for the hook
    (copy / "src").symlink_to(ROOT / "src")  # the API reference still resolves: only the link is broken
    (copy / "docs" / "index.md").write_text((copy / "docs" / "index.md").read_text() + "\n[gone](no-such-page.md)\n")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    assert built.returncode != 0 and "no-such-page.md" in built.stderr

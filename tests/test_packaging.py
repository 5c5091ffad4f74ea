"""What a user who installed only the core gets, checked in this environment by hiding the extras'
packages: every family's default training needs no extra, and a feature that needs one says which,
in one line. Plus the packaging files. (tests/test_plain_install.py does the same with a real wheel
in a fresh virtualenv.)"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the extras' packages (the [hf] extra's huggingface_hub is not among them: tokenizers, a core dependency, requires it)
EXTRAS = ("scipy", "sklearn", "matplotlib", "transformers", "tensorboard", "wandb")
BLOCK = f"""
import sys
for name in {EXTRAS!r}:
    sys.modules[name] = None  # what Python sees for a package that is not installed
from transformers_lite.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def core_only(*args):
    return subprocess.run([sys.executable, "-c", BLOCK, *map(str, args)], capture_output=True, text=True)


def test_the_gpt_needs_no_extra(tmp_path):
    (tmp_path / "t.txt").write_text("To be, or not to be, that is the question.\n" * 40)
    run = tmp_path / "run"
    result = core_only(
        "train",
        "generator",
        "--text",
        tmp_path / "t.txt",
        "--set",
        "max_length=16",
        "--batch-size",
        "4",
        "--max-steps",
        "3",
        "--out",
        run,
    )
    assert result.returncode == 0, result.stderr
    assert core_only("generate", run, "--max-new-tokens", "5").returncode == 0
    assert core_only("evaluate", run, "--json").returncode == 0
    assert core_only("summary", "baby-gpt").returncode == 0


def reviews(path):
    rows = "".join(
        f'{{"review_body": "box number {s} was {"good" if s > 3 else "bad"}", "stars": {s}}}\n' for s in range(1, 6)
    )
    path.write_text(rows * 8)
    return path


def test_the_default_classifier_needs_no_extra(tmp_path):
    """PPMI embeddings (the default preset's embedding_init) without scipy or scikit-learn; evaluating
    without matplotlib prints the metrics and says the plots need the [plots] extra."""
    data, run = reviews(tmp_path / "r.jsonl"), tmp_path / "c"
    result = core_only(
        "train", "classifier", "--train", data, "--val", data, "--max-steps", "1", "--min-df", "1", "--out", run
    )
    assert result.returncode == 0, result.stderr
    recorded = json.loads((run / "hyperparameters.json").read_text())
    assert recorded["data"]["embedding_init"] == "ppmi" and recorded["model"]["members"] == 8  # the preset's own
    result = core_only("evaluate", run, "--data", data, "--json")
    assert result.returncode == 0, result.stderr
    assert '"accuracy"' in result.stdout and "pip install 'transformers-lite[plots]'" in result.stderr


def test_a_missing_extra_is_one_line_naming_it(tmp_path):
    data = reviews(tmp_path / "r.jsonl")
    result = core_only("baseline", "tfidf", "--train", data, "--val", data)
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "the TF-IDF baseline needs scikit-learn: pip install 'transformers-lite[baseline]'" in result.stderr


def test_packaging_files():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert (ROOT / "src" / "transformers_lite" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT"' in text and "[project.urls]" in text and "all = [" in text


def test_the_readme_links_work_on_a_package_index():
    """The README is also the package's description on the package index, where a relative link or image
    leads nowhere: every link is absolute, under the repository address pyproject declares (once), and
    names a file or folder this checkout has."""
    import re

    text = (ROOT / "README.md").read_text()
    homepage = re.search(r'^Homepage = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    inline = re.findall(r"\]\(([^)\s]+)\)", text)
    assert [t for t in inline if not t.startswith(("https://", "#"))] == []
    used = set(re.findall(r"\]\[([^\]]+)\]", text))
    defined = dict(re.findall(r"^\[([^\]]+)\]: (\S+)$", text, re.M))
    assert used <= set(defined), f"links without an address: {used - set(defined)}"
    for name, address in defined.items():
        path = re.fullmatch(re.escape(homepage) + r"/(?:blob|tree|raw)/main/(.+)", address)
        assert path, f"[{name}] points outside {homepage}: {address}"
        assert (ROOT / path.group(1)).exists(), f"[{name}]: {path.group(1)} is not in the checkout"
    assert "../shared" not in text.replace("`../shared/data` beside the checkout", "").split("## Development")[0]


def test_the_source_distribution_carries_the_tests_and_one_version(tmp_path):
    """The version is written once (version.py, read by pyproject's dynamic version), and the sdist
    holds the test tree so a packager can run it."""
    import shutil
    import subprocess
    import sys
    import tarfile

    from transformers_lite.version import __version__

    assert 'dynamic = ["version"]' in (ROOT / "pyproject.toml").read_text()
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "Makefile"):
        shutil.copy(ROOT / name, tree / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "src", tree / "src", ignore=ignore)
    shutil.copytree(ROOT / "tests", tree / "tests", ignore=ignore)
    built = subprocess.run(
        [sys.executable, "-c", "from setuptools import build_meta as b; print(b.build_sdist('dist'))"],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    name = built.stdout.strip().splitlines()[-1]
    with tarfile.open(tree / "dist" / name) as sdist:
        names = sdist.getnames()
        info = sdist.extractfile(next(n for n in names if n.endswith("/PKG-INFO"))).read().decode()
    assert any(n.endswith("/tests/test_packaging.py") for n in names)
    assert any(n.endswith("/tests/fixtures/runs_0.2/reference.json") for n in names)
    assert f"\nVersion: {__version__}\n" in info and "Classifier: Programming Language :: Python :: 3.11" in info

"""What a user who installed only the core gets: the character GPT works without any extra; a
feature that needs one says which, in one line. Plus the packaging files."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = """
import sys
for name in ("scipy", "sklearn", "matplotlib", "sacrebleu", "tokenizers", "transformers"):
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


def test_a_missing_extra_is_one_line_naming_it(tmp_path):
    rows = "".join(f'{{"review_body": "box number {s}", "stars": {s}}}\n' for s in range(1, 6))
    (tmp_path / "r.jsonl").write_text(rows * 8)
    result = core_only(
        "train",
        "classifier",
        "--train",
        tmp_path / "r.jsonl",
        "--val",
        tmp_path / "r.jsonl",
        "--max-steps",
        "1",
        "--min-df",
        "1",
        "--out",
        tmp_path / "c",
    )
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "PPMI embeddings needs scikit-learn: pip install 'transformers-lite[classifier]'" in result.stderr
    result = core_only("baseline", "tfidf", "--train", tmp_path / "r.jsonl", "--val", tmp_path / "r.jsonl")
    assert "needs scikit-learn: pip install 'transformers-lite[classifier]'" in result.stderr


def test_packaging_files():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert (ROOT / "src" / "transformers_lite" / "py.typed").is_file()
    text = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT"' in text and "[project.urls]" in text and "all = [" in text

"""Small files and tiny trained runs shared by the reliability tests; ``cli`` runs ``tlite`` in-process."""

import json
import random
import warnings

import pytest

from transformers_lite.cli.main import main

from ..helpers import TINY_GPT, TINY_MODEL, sets

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" * 30
TINY_CLS = [*TINY_MODEL, "--min-df", "1", "--embedding-init", "random"]
TINY_S2S = [
    "--tokenizer",
    "word",
    *TINY_MODEL,
    *sets("n_encoder_blocks=1", "n_decoder_blocks=1"),
    "--max-tokens",
    "128",
    "--bleu-sentences",
    "0",
]
KEYWORDS = {1: "awful", 2: "poor", 3: "okay", 4: "good", 5: "superb"}
WORDS = "alpha beta gamma delta epsilon zeta eta theta".split()


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def lines(self) -> list[str]:
        return self.err.strip().splitlines()


@pytest.fixture
def cli(capsys):
    """``cli(*args)`` runs ``tlite`` in this process; an exception escaping ``main`` (a traceback) fails."""

    def run(*args) -> Result:
        with warnings.catch_warnings():
            code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


def write_reviews(path, n=120, seed=0, stars=(1, 2, 3, 4, 5)):
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for _ in range(n):
            s = rng.choice(stars)
            fh.write(json.dumps({"review_body": f"the box was {KEYWORDS[s]} for my family", "stars": str(s)}) + "\n")
    return path


def write_pairs(folder, name, n, seed):
    rng = random.Random(seed)
    src, tgt = [], []
    for _ in range(n):
        words = rng.sample(WORDS, rng.randint(1, 4))
        src.append(" ".join(words))
        tgt.append(" ".join(reversed(words)))
    (folder / f"{name}.src").write_text("\n".join(src) + "\n")
    (folder / f"{name}.tgt").write_text("\n".join(tgt) + "\n")
    return folder / f"{name}.src", folder / f"{name}.tgt"


@pytest.fixture(scope="session")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inputs")
    (folder / "text.txt").write_text(TEXT)
    write_reviews(folder / "train.jsonl")
    write_reviews(folder / "dev.jsonl", 40, seed=1)
    write_pairs(folder, "train", 80, 0)
    write_pairs(folder, "val", 10, 1)
    return folder


@pytest.fixture(scope="session")
def runs(files, tmp_path_factory):
    """One tiny trained run of each family (trained in-process, a few steps)."""
    folder = tmp_path_factory.mktemp("runs")
    assert (
        main(
            [
                "train",
                "generator",
                "--text",
                str(files / "text.txt"),
                *TINY_GPT,
                "--max-steps",
                "4",
                "--out",
                str(folder / "generator"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "train",
                "classifier",
                "--train",
                str(files / "train.jsonl"),
                "--val",
                str(files / "dev.jsonl"),
                *TINY_CLS,
                "--max-steps",
                "4",
                "--out",
                str(folder / "classifier"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "train",
                "seq2seq",
                "--train-src",
                str(files / "train.src"),
                "--train-tgt",
                str(files / "train.tgt"),
                "--val-src",
                str(files / "val.src"),
                "--val-tgt",
                str(files / "val.tgt"),
                *TINY_S2S,
                "--max-steps",
                "4",
                "--out",
                str(folder / "seq2seq"),
            ]
        )
        == 0
    )
    return folder

"""Word vectors in GloVe's text format: what is kept, what is refused, for any vocabulary and dimension."""

import gzip

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.data.vectors import read_word_vectors
from transformers_lite.errors import DataError

words_st = st.lists(st.text("abcdefghij", min_size=1, max_size=6), min_size=1, max_size=12, unique=True)


@settings(max_examples=40, deadline=None)
@given(words=words_st, dim=st.integers(1, 6), wanted=st.sets(st.text("abcdefghij", min_size=1, max_size=6)))
def test_the_wanted_words_come_back_with_their_own_numbers(tmp_path_factory, words, dim, wanted):
    path = tmp_path_factory.mktemp("v") / "vectors.txt"
    table = {w: [round(0.25 * (i + 1) * (j - 2), 4) for j in range(dim)] for i, w in enumerate(words)}
    path.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in table.items()))
    found, file_dim = read_word_vectors(path, wanted)
    assert file_dim == dim and set(found) == wanted & set(words)
    assert all(torch.equal(found[w], torch.tensor(table[w], dtype=torch.float32)) for w in found)


def test_a_word2vec_header_is_skipped_and_gzip_is_read(tmp_path):
    path = tmp_path / "v.txt.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("2 3\nthe 1 2 3\ncat 4 5 6\n")
    found, dim = read_word_vectors(path, {"cat", "dog"})
    assert dim == 3 and list(found) == ["cat"] and found["cat"].tolist() == [4.0, 5.0, 6.0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("the 1 2 3\ncat 4 5\n", "v.txt:2: 2 numbers where the file's first vector has 3"),
        ("the 1 2 3\ncat 4 x 6\n", "v.txt:2: the vector of 'cat' holds a value that is not a finite number"),
        ("the 1 nan 3\n", "v.txt:1: the vector of 'the' holds a value that is not a finite number"),
        ("the\n", "v.txt:1: expected a word and its numbers"),
        ("", "v.txt: no vectors in the file"),
    ],
)
def test_a_bad_file_is_an_error_naming_the_line(tmp_path, text, message):
    (tmp_path / "v.txt").write_text(text)
    with pytest.raises(DataError, match=message):
        read_word_vectors(tmp_path / "v.txt", {"the", "cat"})


def test_a_missing_or_binary_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="word vectors file not found"):
        read_word_vectors(tmp_path / "nope.txt", {"a"})
    (tmp_path / "b.bin").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(DataError, match="not UTF-8 text"):
        read_word_vectors(tmp_path / "b.bin", {"a"})

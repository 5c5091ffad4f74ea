"""The vectorised corpus encoder keeps every text to itself: each text's ids are those of encoding it
alone, whatever the other texts hold (NUL, control characters, line separators, accents)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.tokenizers import WordTokenizer, words
from transformers_lite.tokenizers.fast_words import encode_corpus

VOCAB = ["ab", "cd", "de", "abcd", "σς", "straße", "日本", "_x", "e1"]
# the characters that used to move words between texts (NUL: the bulk separator) and their neighbours
TRICKY = "\x00\x01\x1f\x7f\r\n\t\v\f\x85\u2028\u2029\u200d\u0301 '’`,.-_"
CHARS = st.one_of(
    st.sampled_from(list("abcdeé1ßΣσ日本") + list(TRICKY)),
    st.characters(codec="utf-8"),  # anything else UTF-8 can carry (no lone surrogates)
)
TEXTS = st.lists(st.text(CHARS, max_size=25), min_size=1, max_size=8)


def tokenizer() -> WordTokenizer:
    return WordTokenizer(VOCAB, "[UNK]", pad="[PAD]")


@given(TEXTS, st.integers(1, 12))
def test_each_text_encodes_as_it_would_alone(texts, max_length):
    tok = tokenizer()
    ids, valid = tok.encode_batch(texts, max_length)  # the bulk path (texts joined, one pass)
    bulk = [row[m].tolist() for row, m in zip(ids, valid)]
    assert bulk == [tok.encode(t, max_length=max_length) for t in texts]  # one text at a time
    assert bulk == [tok.encode_words(words(t))[:max_length] for t in texts]  # the plain per-review split


@given(TEXTS, st.text(CHARS, max_size=25))
def test_a_text_does_not_depend_on_its_neighbours(texts, extra):
    """Adding a text, anywhere, changes nothing in the rows of the others."""
    tok = tokenizer()
    alone, lengths = encode_corpus(texts, tok.lookup, tok.unk_id, tok.pad_id, 50, 50)
    with_extra, lengths2 = encode_corpus([extra, *texts, extra], tok.lookup, tok.unk_id, tok.pad_id, 50, 50)
    assert np.array_equal(with_extra[1:-1], alone) and np.array_equal(lengths2[1:-1], lengths)


def test_a_nul_inside_a_review_keeps_its_words():
    tok = tokenizer()
    ids, valid = tok.encode_batch(["ab\x00cd", "abcd"], 5)
    assert ids[0][valid[0]].tolist() == tok.encode_words(["ab", "cd"])
    assert ids[1][valid[1]].tolist() == tok.encode_words(["abcd"])
    ids, valid = tok.encode_batch(["straße\x00", "\x00\x00ab"], 5)  # more NULs than texts: no IndexError
    assert [r[m].tolist() for r, m in zip(ids, valid)] == [tok.encode_words(["straße"]), tok.encode_words(["ab"])]

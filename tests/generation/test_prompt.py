"""A prompt cut where its tokens end, as the inspector shows it: the pieces join to the prompt, a
byte-level BPE gives whole tokens, never half a character."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.generation.prompt import prompt_pieces


@pytest.fixture(scope="module")
def byte_bpe():
    from transformers_lite.tokenizers.byte_bpe import ByteLevelBPETokenizer

    return ByteLevelBPETokenizer.train(["the theory of the thing, thé and ünïcode"] * 20, vocab_size=300)


def test_a_bpe_prompt_is_cut_into_its_tokens_not_characters(byte_bpe):
    ids = byte_bpe.encode("the theory")
    pieces = prompt_pieces(byte_bpe, "the theory", ids)
    assert len(pieces) == len(ids) < len("the theory") and "".join(pieces) == "the theory"
    assert pieces == [byte_bpe.decode([i]) for i in ids]  # whole tokens: each decodes alone


@settings(max_examples=25, deadline=None)
@given(text=st.text(min_size=1, max_size=12))
def test_bpe_pieces_join_to_the_prompt_and_never_split_a_character(byte_bpe, text):
    ids = byte_bpe.encode(text)
    pieces = prompt_pieces(byte_bpe, text, ids)
    assert "".join(pieces) == text and len(pieces) <= len(ids)
    assert all(piece and "\ufffd" not in piece for piece in pieces) or "\ufffd" in text

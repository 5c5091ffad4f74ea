import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.tokenizers import CharTokenizer, IndexTokenizer, load_tokenizer


def make():
    return IndexTokenizer(["the", "cat", "sat"], "[UNK]", pad="[PAD]", bos="[BOS]", eos="[EOS]")


def test_unknown_first_and_fixed_special_ids():
    tok = make()
    assert (tok.unk_id, tok.pad_id, tok.bos_id, tok.eos_id) == (0, 1, 2, 3)
    assert len(tok) == 7 and tok.vocabulary[4:] == ["the", "cat", "sat"]
    assert tok.encode_token("dog") == 0
    existing = IndexTokenizer(["a", "[UNK]", "b"], "[UNK]")
    assert existing.unk_id == 0 and existing.vocabulary == ["[UNK]", "a", "b"]
    assert "length(vocabulary)=7" in repr(tok) and "unksym='[UNK]'" in repr(tok)


def test_round_trip_and_truncation():
    tok = make()
    seq = ["the", "cat", "sat"]
    assert tok.decode(tok.encode(seq)) == seq
    assert tok.encode(seq, max_length=2) == [4, 5]
    assert tok.encode(seq, add_bos=True, add_eos=True) == [2, 4, 5, 6, 3]
    assert tok.encode(seq, max_length=3, add_eos=True) == [4, 5, 3]
    assert tok.decode([2, 4, 3, 1], skip_special=True) == ["the"]


def test_batches_are_padded_with_the_pad_id_and_masked():
    tok = make()
    ids, mask = tok.encode_batch([["the", "cat"], ["sat"], []])
    assert ids.tolist() == [[4, 5], [6, 1], [1, 1]]
    assert mask.tolist() == [[True, True], [True, False], [False, False]]
    ids, mask = tok.encode_batch([["the"]], pad_to=4)
    assert ids.tolist() == [[4, 1, 1, 1]] and ids.dtype == torch.long
    with pytest.raises(ValueError, match="no pad token"):
        IndexTokenizer(["a"]).encode_batch([["a"]])


def test_save_load_round_trip(tmp_path):
    tok = make()
    tok.save(tmp_path / "tok.json")
    back = load_tokenizer(tmp_path / "tok.json")
    assert back.vocabulary == tok.vocabulary and back.pad_id == tok.pad_id and type(back) is IndexTokenizer
    chars = CharTokenizer.from_text("hello")
    chars.save(tmp_path / "c.json")
    assert isinstance(load_tokenizer(tmp_path / "c.json"), CharTokenizer)


def test_char_tokenizer_vocabulary_is_sorted_unique_plus_unknown():
    tok = CharTokenizer.from_text("banana!")
    assert tok.vocabulary == ["Ø", "!", "a", "b", "n"]
    assert tok.encode_text("nab") == [4, 2, 3]


@given(st.text(alphabet=st.characters(blacklist_characters="Ø"), min_size=1), st.text())
def test_char_round_trip_and_unknown_characters(train, other):
    tok = CharTokenizer.from_text(train)
    assert tok.decode_text(tok.encode_text(train)) == train
    decoded = tok.decode_text(tok.encode_text(other))
    assert len(decoded) == len(other)
    assert all(d == o if o in set(train) else d == "Ø" for d, o in zip(decoded, other))

from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.tokenizers import CharTokenizer, load_tokenizer


def test_char_tokenizer_vocabulary_is_sorted_unique_plus_unknown(tmp_path):
    tok = CharTokenizer.from_text("banana!")
    assert tok.vocabulary == ["Ø", "!", "a", "b", "n"]
    assert tok.encode("nab") == [4, 2, 3] and tok.decode([4, 2, 3]) == "nab"
    assert tok.pad_id is None and tok.token(1) == "!"
    tok.save(tmp_path / "c.json")
    back = load_tokenizer(tmp_path / "c.json")
    assert isinstance(back, CharTokenizer) and back.vocabulary == tok.vocabulary


@given(st.text(alphabet=st.characters(blacklist_characters="Ø"), min_size=1), st.text())
def test_char_round_trip_and_unknown_characters(train, other):
    tok = CharTokenizer.from_text(train)
    assert tok.decode(tok.encode(train)) == train
    decoded = tok.decode(tok.encode(other))
    assert len(decoded) == len(other)
    assert all(d == o if o in set(train) else d == "Ø" for d, o in zip(decoded, other))

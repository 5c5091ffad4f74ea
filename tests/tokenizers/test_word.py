import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.tokenizers import WordTokenizer, load_tokenizer, load_vocabulary, words

from ..conftest import shared_data


def make(split="seed"):
    return WordTokenizer(["the", "cat", "sat", "."], "[UNK]", pad="[PAD]", bos="[BOS]", eos="[EOS]", split=split)


def test_unknown_first_and_fixed_special_ids():
    tok = make()
    assert (tok.unk_id, tok.pad_id, tok.bos_id, tok.eos_id) == (0, 1, 2, 3)
    assert len(tok) == 8 and tok.vocabulary[4:] == ["the", "cat", "sat", "."]
    assert tok.encode("dog") == [0]
    existing = WordTokenizer(["a", "[UNK]", "b"], "[UNK]")
    assert existing.unk_id == 0 and existing.vocabulary == ["[UNK]", "a", "b"]
    assert "length(vocabulary)=8" in repr(tok) and "unksym='[UNK]'" in repr(tok)
    with pytest.raises(ValueError, match="duplicate token 'a'"):
        WordTokenizer(["a", "a"])


def test_text_round_trip_truncation_and_specials():
    tok = make()
    assert tok.encode("The cat sat.") == [4, 5, 6]  # seed split: lowercase words, punctuation dropped
    assert tok.decode(tok.encode("the cat sat")) == "the cat sat"
    assert tok.encode("the cat sat", max_length=2) == [4, 5]
    assert tok.encode("the cat sat", add_bos=True, add_eos=True) == [2, 4, 5, 6, 3]
    assert tok.encode("the cat sat", max_length=3, add_eos=True) == [4, 5, 3]
    assert tok.decode([2, 4, 3, 1]) == "the" and tok.decode([2, 4, 3], skip_special=False) == "[BOS] the [EOS]"
    assert tok.encode_words(["the", "dog"]) == [4, 0]  # the posts' encode: a list of words


def test_punct_split_keeps_marks_and_decodes_without_space_before_them():
    tok = make("punct")
    assert tok.words("The cat, sat.") == ["the", "cat", ",", "sat", "."]
    assert tok.encode("The cat sat.") == [4, 5, 6, 7]
    assert tok.decode([4, 5, 6, 7]) == "the cat sat."


def test_batches_are_padded_with_the_pad_id_and_masked():
    tok = make()
    ids, mask = tok.encode_batch(["the cat", "sat", ""])
    assert ids.tolist() == [[4, 5], [6, 1], [1, 1]]
    assert mask.tolist() == [[True, True], [True, False], [False, False]]
    ids, mask = tok.encode_batch(["the"], pad_to=4)
    assert ids.tolist() == [[4, 1, 1, 1]] and ids.dtype == torch.long
    with pytest.raises(ValueError, match="no pad token"):
        WordTokenizer(["a"]).encode_batch(["a"])


def test_save_load_round_trip(tmp_path):
    tok = make("punct")
    tok.save(tmp_path / "tok.json")
    back = load_tokenizer(tmp_path / "tok.json")
    assert type(back) is WordTokenizer and back.vocabulary == tok.vocabulary and back.split == "punct"
    assert back.encode("The cat.") == tok.encode("The cat.")


def test_fast_corpus_path_equals_the_plain_pipeline():
    tok = WordTokenizer(["good", "coffee", "creme", "dont", "its", "日本語"], "[UNK]", pad="[PAD]")
    texts = ["Good COFFEE, good!", "Crème brûlée — don't “stop” it’s", "a b c", "日本語 x ßß", "\n\n", "good " * 80]
    ids, valid = tok.encode_batch(texts, max_length=50, pad_to=60)  # vectorised: the seed split
    plain = [tok.encode_words(words(t))[:50] for t in texts]
    assert [row[m].tolist() for row, m in zip(ids, valid)] == plain
    assert ids.shape == (6, 60) and (ids[~valid] == tok.pad_id).all()
    assert ids[0].tolist()[:4] == [2, 3, 2, 1] and valid[4].sum() == 0 and valid[5].sum() == 50


@given(st.lists(st.text(alphabet="ab cdé'’\n,.", max_size=30), min_size=1, max_size=8), st.integers(1, 12))
def test_fast_path_equals_encode_for_any_text(texts, max_length):
    tok = WordTokenizer(["ab", "cd", "dé", "abcd", "ee"], pad="[PAD]")
    ids, valid = tok.encode_batch(texts, max_length)
    assert [row[m].tolist() for row, m in zip(ids, valid)] == [tok.encode(t, max_length=max_length) for t in texts]


def test_a_new_tokenizer_of_the_same_size_gets_its_own_lookup_table():
    first = WordTokenizer(["good", "bad"], "[UNK]", pad="[PAD]")
    assert first.encode_batch(["good bad"], 5)[0].tolist() == [[2, 3]]
    second = WordTokenizer(["bad", "good"], "[UNK]", pad="[PAD]")  # same length, other order
    assert second.encode_batch(["good bad"], 5)[0].tolist() == [[3, 2]]


def test_real_reviews_fast_path_parity():
    from transformers_lite.data.reviews import load_reviews

    dev = load_reviews(shared_data("amazon_reviews_multi_en", "dev.jsonl"))
    tok = WordTokenizer(
        load_vocabulary(shared_data("amazon_reviews_vocab", "amazon_reviews_train_en.txt")), "[UNK]", pad="[PAD]"
    )
    ids, valid = tok.encode_batch(dev.texts, 50, pad_to=50)
    assert [row[m].tolist() for row, m in zip(ids, valid)] == [tok.encode(t, max_length=50) for t in dev.texts]

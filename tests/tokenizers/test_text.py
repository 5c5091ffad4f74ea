import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.tokenizers import (
    WordTokenizer,
    load_vocabulary,
    save_vocabulary,
    select_vocabulary,
    simplify,
    words,
)
from transformers_lite.tokenizers.text import document_frequencies, ignorable, words_and_punctuation

from ..conftest import shared_data


def test_simplify_follows_the_seed():
    assert simplify("Crème Brûlée") == "creme brulee"
    assert simplify("Don't `quote` it’s\nfine") == "dont quote its fine"
    assert simplify("a\u200db") == "ab"
    assert words("This coffee from Kenya is really good.") == [
        "this",
        "coffee",
        "from",
        "kenya",
        "is",
        "really",
        "good",
    ]
    assert words("I a x1 ab") == ["x1", "ab"]  # single characters are not words


@given(st.text())
def test_simplify_is_idempotent_and_has_no_marks_or_apostrophes(text):
    once = simplify(text)
    assert simplify(once) == once
    assert not any(c in once for c in "'`’\n\u200d")


def test_select_vocabulary_counts_documents_not_occurrences():
    corpus = ["the cat the cat the cat", "the dog", "a dog and the cat", "bird"]
    counts = document_frequencies(corpus)
    assert counts["the"] == 3 and counts["cat"] == 2 and counts["dog"] == 2 and counts["bird"] == 1
    # ties (cat, dog: 2 documents) are broken alphabetically
    assert select_vocabulary(corpus, min_document_frequency=2) == ["the", "cat", "dog"]
    assert select_vocabulary(corpus, min_document_frequency=1, max_size=2) == ["the", "cat"]
    assert select_vocabulary(list(reversed(corpus)), 1) == select_vocabulary(corpus, 1)
    with pytest.raises(ValueError, match="min_document_frequency"):
        select_vocabulary(corpus, 0)


def test_vocabulary_file_round_trip_and_errors(tmp_path):
    path = tmp_path / "vocab.txt"
    save_vocabulary(["the", "cat"], path)
    assert load_vocabulary(path) == ["the", "cat"]
    path.write_text("the\ncat\nthe\n")
    with pytest.raises(ValueError, match=r"vocab.txt:3: duplicate token 'the' \(first on line 1\)"):
        load_vocabulary(path)
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        load_vocabulary(tmp_path / "missing.txt")


def test_loads_the_seeds_vocabulary():
    vocab = load_vocabulary(shared_data("amazon_reviews_vocab", "amazon_reviews_train_en.txt"))
    assert len(vocab) == 6653 and vocab[:3] == ["the", "it", "and"]


IGNORABLE = ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e", "\U000e0041"]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    inserts=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(IGNORABLE)), max_size=6),
)
def test_an_invisible_character_changes_no_word(text, inserts):
    """A soft hyphen, zero-width space, joiner or BOM anywhere in a text: the same words, both splits,
    so training and use (which both encode through them) read the text one way."""
    marked = text
    for at, char in sorted(inserts, reverse=True):
        marked = marked[:at] + char + marked[at:]
    assert words(marked) == words(text)
    assert words_and_punctuation(marked) == words_and_punctuation(text)
    assert not any(ignorable(c) for c in simplify(marked))


def test_a_soft_hyphen_inside_a_word_is_the_word():
    assert words("an excel\u00adlent zero\u200bwidth box") == ["an", "excellent", "zerowidth", "box"]
    tok = WordTokenizer(["excellent", "box"], pad="[PAD]", split="words")
    assert tok.encode("excel\u00adlent box") == tok.encode("excellent box")
    ids, valid = tok.encode_batch(["excel\u00adlent\u2060 box", "excellent box"], pad_to=4, max_length=4)
    assert ids[0].tolist() == ids[1].tolist()  # the vectorised path agrees


@settings(max_examples=50)
@given(st.lists(st.text(alphabet="ab c.!?,\n'", max_size=20), max_size=8), st.integers(1, 3))
def test_a_vocabulary_is_cut_by_the_split_it_names(corpus, min_df):
    """With ``split="punct"`` the vocabulary holds the words and marks ``words_and_punctuation`` gives,
    each in at least ``min_df`` documents, most frequent first; an unknown split is named."""
    vocabulary = select_vocabulary(corpus, min_df, split="punct")
    counts = document_frequencies(corpus, split="punct")
    assert set(vocabulary) == {t for t in set().union(*map(words_and_punctuation, corpus)) if counts[t] >= min_df}
    assert [counts[t] for t in vocabulary] == sorted((counts[t] for t in vocabulary), reverse=True)
    assert select_vocabulary(corpus, min_df) == select_vocabulary(corpus, min_df, split="words")
    with pytest.raises(ValueError, match="'chars'"):
        select_vocabulary(corpus, min_df, split="chars")

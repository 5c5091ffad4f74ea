import gzip
import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.data.translation import bucket_batches, filter_by_length, load_pairs, load_parallel, make_batch
from transformers_lite.errors import ConfigError, DataError

from ..conftest import shared_data


def test_load_plain_and_gzip_and_mismatch(tmp_path):
    (tmp_path / "a.de").write_text("Ein Hund.\nZwei Katzen.\n")
    with gzip.open(tmp_path / "a.en.gz", "wt") as fh:
        fh.write("A dog.\nTwo cats.\n")
    src, tgt = load_parallel(tmp_path / "a.de", tmp_path / "a.en.gz")
    assert src == ["Ein Hund.", "Zwei Katzen."] and tgt == ["A dog.", "Two cats."]
    (tmp_path / "b.en").write_text("A dog.\n")
    with pytest.raises(ValueError, match=r"a.de has 2 lines, .*b.en has 1 lines"):
        load_parallel(tmp_path / "a.de", tmp_path / "b.en")


def test_batches_shift_target_and_mask_padding():
    b = make_batch([[5, 6, 7], [8]], [[9, 10], [11, 12, 13]], pad_id=1, bos_id=2, eos_id=3)
    assert b.src.tolist() == [[5, 6, 7], [8, 1, 1]] and b.src_valid.tolist()[1] == [True, False, False]
    assert b.tgt_in.tolist() == [[2, 9, 10, 1], [2, 11, 12, 13]]
    assert b.tgt_out.tolist() == [[9, 10, 3, 1], [11, 12, 13, 3]]
    assert b.tgt_valid.tolist()[0] == [True, True, True, False]


def test_bucketing_respects_token_budget_and_covers_everything():
    src = [[1] * n for n in (3, 10, 4, 9, 2, 11, 5)]
    tgt = [[1] * n for n in (3, 9, 4, 10, 2, 12, 5)]
    batches = bucket_batches(src, tgt, max_tokens=30, seed=0)
    assert sorted(i for b in batches for i in b) == list(range(7))
    for b in batches:
        longest = max(max(len(src[i]), len(tgt[i])) + 1 for i in b)
        assert longest * len(b) <= 30 or len(b) == 1
    assert bucket_batches(src, tgt, 30, seed=0) == batches
    s, t = filter_by_length(src, tgt, max_length=9)
    assert all(len(x) <= 9 for x in s + t) and len(s) == 4


@given(st.lists(st.tuples(st.integers(1, 30), st.integers(1, 30)), min_size=1, max_size=60), st.integers(0, 99))
def test_every_shuffle_cuts_as_many_batches(lengths, seed):
    """The batch count does not depend on the seed: the task counts an epoch's steps once."""
    src, tgt = [[1] * a for a, _ in lengths], [[1] * b for _, b in lengths]
    assert len(bucket_batches(src, tgt, 64, seed=seed)) == len(bucket_batches(src, tgt, 64, seed=None))


def test_real_multi30k_sizes():
    src, tgt = load_parallel(shared_data("multi30k", "train.de.gz"), shared_data("multi30k", "train.en.gz"))
    assert len(src) == len(tgt) == 29_000
    src, tgt = load_parallel(shared_data("multi30k", "val.de.gz"), shared_data("multi30k", "val.en.gz"))
    assert len(src) == 1_014


PAIRS = [("Ein Hund, der läuft.", "A dog, running."), ("Zwei\tKatzen.", "Two cats."), ('Er sagt "ja".', "He says yes.")]


@pytest.mark.parametrize("kind", ["tsv", "csv", "jsonl", "translation"])
def test_a_table_of_pairs_in_each_shape(tmp_path, kind):
    import csv
    import json

    from transformers_lite.data.translation import load_pairs

    path = tmp_path / f"pairs.{'jsonl' if kind == 'translation' else kind}"
    if kind in ("tsv", "csv"):
        with open(path, "w", newline="") as f:
            writer = csv.writer(f, delimiter="\t" if kind == "tsv" else ",")
            writer.writerow(["de", "en"])  # two text columns, no usual name: the source first
            writer.writerows(PAIRS)
        expected = ("de", "en")
    elif kind == "jsonl":
        records = [{"id": i, "source": a, "target": b} for i, (a, b) in enumerate(PAIRS)]
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        expected = ("source", "target")
    else:  # a Hugging Face translation dataset's records
        path.write_text("".join(json.dumps({"translation": {"de": a, "en": b}}) + "\n" for a, b in PAIRS))
        expected = ("de", "en")
    pairs = load_pairs(path)
    assert list(zip(pairs.src, pairs.tgt)) == PAIRS and pairs.languages == expected
    if kind == "translation":  # the other direction, by naming the languages
        flipped = load_pairs(path, columns=("en", "de"))
        assert flipped.src == [b for _, b in PAIRS] and flipped.languages == ("en", "de")


def test_a_table_of_pairs_without_a_header_is_said_to_lose_its_first_pair(tmp_path):
    """A TSV written without a header: its first pair is read as the column names. That is said, and a
    header of names (``de``/``en``) is not warned about."""
    from transformers_lite.data.translation import load_pairs
    from transformers_lite.errors import TliteWarning

    path = tmp_path / "pairs.tsv"
    path.write_text("Ein Hund läuft.\tA dog runs.\nZwei Katzen.\tTwo cats.\nEin Haus.\tA house.\n")
    with pytest.warns(TliteWarning, match="line 1 reads like a pair.*'Ein Hund läuft.', 'A dog runs.'"):
        pairs = load_pairs(path)
    assert pairs.src == ["Zwei Katzen.", "Ein Haus."]
    path.write_text("de\ten\nZwei Katzen.\tTwo cats.\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_pairs(path).languages == ("de", "en")


def test_one_side_alone_is_refused_and_line_files_name_their_languages(tmp_path):
    from transformers_lite.data.translation import load_pairs
    from transformers_lite.errors import ConfigError

    (tmp_path / "train.de").write_text("Ein Hund.\n")
    (tmp_path / "train.en").write_text("A dog.\n")
    with pytest.raises(ConfigError, match="holds one side of the pairs: give the target sentences too"):
        load_pairs(tmp_path / "train.de")
    assert load_pairs(tmp_path / "train.de", tmp_path / "train.en").languages == ("de", "en")
    (tmp_path / "three.tsv").write_text("a\tb\tc\nx\ty\tz\n")
    with pytest.raises(ConfigError, match="which columns hold the source and the target"):
        load_pairs(tmp_path / "three.tsv")


@settings(max_examples=40, deadline=None)
@given(src=st.sampled_from([0, 1, 2, None]), tgt=st.sampled_from([0, 1, 2, None]), nested=st.booleans())
def test_a_pair_is_read_from_two_columns_or_refused_naming_the_one(tmp_path_factory, src, tgt, nested):
    """One column (or language) named as both sides of a pair is refused naming it and what the file
    holds, whether both options name it or one names what the other side finds; two distinct columns are
    read as the source and the target."""
    # a side not named is found: a translation's first or second language, a table's source or target column
    columns = ["de", "en", "fr"] if nested else ["source", "target", "notes"]
    rows = [{c: f"{c} sentence {i}" for c in columns[:2]} for i in range(4)]
    path = tmp_path_factory.mktemp("pairs") / "pairs.jsonl"
    path.write_text("".join(json.dumps({"translation": r} if nested else r) + "\n" for r in rows))
    named = (None if src is None else columns[src], None if tgt is None else columns[tgt])
    a, b = named[0] or columns[0], named[1] or columns[1]
    if a == b:
        with pytest.raises(ConfigError, match=rf"the source and the target are both '{a}'"):
            load_pairs(path, None, named)
    elif a in columns[:2] and b in columns[:2]:
        pairs = load_pairs(path, None, named)
        assert pairs.src == [r[a] for r in rows] and pairs.tgt == [r[b] for r in rows]
    else:  # a column the file lacks: named by the record
        with pytest.raises(DataError, match=columns[2]):
            load_pairs(path, None, named)


def test_one_file_as_both_sides_is_said(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    with pytest.warns(UserWarning, match="is both the source and the target file"):
        pairs = load_pairs(tmp_path / "a.txt", tmp_path / "a.txt")
    assert pairs.src == pairs.tgt == ["one", "two"]

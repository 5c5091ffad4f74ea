"""One reader decides a file's format from its content: every form a user's file comes in reads as
what it holds, and anything decided against the name, unwrapped or refused is said (reliability
class 4, "input read differently from how it looks"; and class 7, messages naming the condition)."""

import bz2
import csv
import gzip
import io
import json
import lzma
import os
import re
import warnings
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.data.formats import UNREADABLE, check_file, hint, read_bytes, sniff
from transformers_lite.data.inputs import json_kind, read_inputs
from transformers_lite.data.reviews import load_reviews
from transformers_lite.data.sources import read_text_file
from transformers_lite.data.tables import read_table
from transformers_lite.errors import DataError, TliteWarning

# what a user's texts hold: any character (line breaks of every kind, quotes, delimiters), the
# default-ignorable ones (soft hyphen, zero-width space, ZWNJ/ZWJ, word joiner, BOM), lone CRs
IGNORABLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
TEXTS = st.text(
    st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from([*IGNORABLE, "\r", "\t", '"', ","])),
    min_size=1,
    max_size=30,
).filter(lambda t: t.strip() and "\x00" not in t)
LABELS = st.sampled_from(["neg", "pos", "7", "books"])
COMPRESS = {
    "": lambda b: b,
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zip": lambda b: _zip(b),
}


def _zip(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("data", data)
    return out.getvalue()


def content(records, kind: str, long: bool) -> str:
    """``records`` ``[(text, label)]`` as a file of ``kind``, the way a user's tools write one."""
    if long:  # a field of 200,000 characters: read, not "larger than field limit"
        records = [*records, ("x" * 200_000, "pos")]
    if kind in ("csv", "tsv"):
        out = io.StringIO(newline="")
        writer = csv.writer(out, delimiter="," if kind == "csv" else "\t")  # quotes fields as needed
        writer.writerow(["comment", "sentiment"])
        writer.writerows(records)
        return out.getvalue()
    rows = [{"comment": t, "sentiment": lab} for t, lab in records]
    if kind == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if kind == "json":
        return json.dumps(rows, ensure_ascii=False, indent=1)
    return json.dumps({"version": 2, "data": rows}, ensure_ascii=False)  # an object wrapping its records


def cased(suffix: str, case: str) -> str:
    return {"lower": suffix, "upper": suffix.upper(), "title": suffix.title()}[case]


FORMS = st.fixed_dictionaries(
    {
        "records": st.lists(st.tuples(TEXTS, LABELS), min_size=1, max_size=8),
        "kind": st.sampled_from(["csv", "tsv", "jsonl", "json", "wrapped"]),
        "compression": st.sampled_from(list(COMPRESS)),
        "named": st.sampled_from(["as-is", "none", "txt"]),  # the name says the format, nothing, or .txt
        "case": st.sampled_from(["lower", "upper", "title"]),
        "compression_named": st.booleans(),  # gzip bytes named .txt, or .gz
        "bom": st.booleans(),
        "crlf": st.booleans(),
        "long": st.booleans(),
    }
)


def write_form(folder, form) -> tuple:
    kind = form["kind"]
    text = content(form["records"], kind, form["long"])
    if form["crlf"] and kind in ("jsonl", "json", "wrapped"):  # a CSV's line endings inside quotes are its text
        text = text.replace("\n", "\r\n")
    raw = ("\ufeff" if form["bom"] else "").encode() + text.encode()
    raw = COMPRESS[form["compression"]](raw)
    own = {"csv": ".csv", "tsv": ".tsv", "jsonl": ".jsonl", "json": ".json", "wrapped": ".json"}[kind]
    suffix = {"as-is": own, "none": "", "txt": ".txt"}[form["named"]]
    if form["compression_named"]:
        suffix += form["compression"]
    path = folder / f"data{cased(suffix, form['case'])}"
    path.write_bytes(raw)
    return path


@settings(max_examples=120, deadline=None)
@given(form=FORMS)
def test_every_form_of_a_table_reads_as_what_it_holds_and_what_was_decided_is_said(tmp_path_factory, form):
    path = write_form(tmp_path_factory.mktemp("form"), form)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reviews = load_reviews(path)
    said = [str(w.message) for w in caught if issubclass(w.category, TliteWarning)]
    records = form["records"] + ([("x" * 200_000, "pos")] if form["long"] else [])
    assert len(reviews) == len(records)
    assert [str(v) for v in reviews.values] == [lab for _, lab in records]
    if form["kind"] in ("csv", "tsv"):  # a CSV's line breaks read as Python's text mode reads them
        assert reviews.texts == [t.replace("\r\n", "\n").replace("\r", "\n") for t, _ in records]
    else:  # every character as written: nothing dropped or joined by the reader
        assert reviews.texts == [t for t, _ in records]
    if form["kind"] == "wrapped":
        assert any(f"its {len(records)} records were read from its 'data' list" in s for s in said)
    if form["compression"] and not form["compression_named"]:
        assert any("-compressed (its name does not say so)" in s for s in said)
    if form["named"] == "txt":  # content over the name: said
        assert any(str(path) in s and ".txt" in s for s in said)
    assert all(str(path) in s for s in said)  # every notice names the file


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(TEXTS.map(lambda t: t.replace("\n", " ").replace("\r", " ").strip()).filter(bool), min_size=1),
    compression=st.sampled_from(list(COMPRESS)),
    case=st.sampled_from(["lower", "upper", "title"]),
    brace=st.booleans(),
)
def test_a_text_file_reads_as_its_lines_whatever_its_compression_and_first_character(
    tmp_path_factory, lines, compression, case, brace
):
    if brace:  # a first line that starts with { but is no JSON object: a text, not JSON Lines
        lines = ["{ not json", *lines]
    path = tmp_path_factory.mktemp("txt") / f"input{cased('.txt' + compression, case)}"
    path.write_bytes(COMPRESS[compression]("\n".join(lines).encode() + b"\n"))
    assert read_inputs(str(path)) == (lines, False)


# (name, bytes, expected format); ids name the file and the answer, since raw bytes make unreadable ids
FORMAT_CASES = [
    ("reviews.csv.gz", gzip.compress(b"text,label\ngood,pos\n", mtime=0), "csv"),
    ("input.TXT.GZ", gzip.compress(b'{"text": 1}\nplain\n', mtime=0), "text"),
    ("notes.txt", b'{"a": 1}\nsecond line\n', "text"),
    ("list.txt", b"[1, 2]\n", "text"),
    ("records.txt", b'{"a": 1}\n{"a": 2}\n', "jsonl"),
    ("data.json", b'{"data": [{"a": 1}]}', "json"),
    ("data.json", b'{"a": 1}\n{"a": 2}\n', "jsonl"),
    ("x.jsonl", b"[1, 2]\n", "jsonl"),
    ("pairs", b"de\ten\nHund\tdog\n", "tsv"),
]


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    FORMAT_CASES,
    ids=[f"{name}-{expected}" for name, _, expected in FORMAT_CASES],
)
def test_the_format_comes_from_the_content(tmp_path, name, raw, expected):
    (tmp_path / name).write_bytes(raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = read_bytes(tmp_path / name).decode()
    assert sniff(text, hint(tmp_path / name)) == expected


def test_a_json_object_wrapping_records_is_read_and_said(tmp_path):
    path = tmp_path / "reviews.json"
    path.write_text(json.dumps({"data": [{"text": "good box", "label": "pos"}, {"text": "bad", "label": "neg"}]}))
    with pytest.warns(TliteWarning, match=r"reviews.json: a JSON object; its 2 records were read from its 'data'"):
        assert read_table(path).rows[1] == {"text": "bad", "label": "neg"}
    path.write_text(json.dumps({"train": [{"text": "a"}], "test": [{"text": "b"}]}))
    with pytest.raises(DataError, match=r"a JSON object holding 2 lists of records \('train', 'test'\)"):
        read_table(path)


def test_a_label_that_is_a_list_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "multi.jsonl"
    path.write_text('{"text": "a book", "label": "books"}\n{"text": "a toy book", "label": ["books", "toys"]}\n')
    with pytest.raises(DataError, match=r"multi.jsonl:2: the 'label' label is a list .*another column with --label-c"):
        load_reviews(path, options=("--text-column", "--label-column"))  # training: it can choose another
    with pytest.raises(DataError, match=r"multi.jsonl:2: the 'label' label is a list .*one value per record$"):
        load_reviews(path)  # evaluate: no option to point at


def test_a_csv_field_of_200000_characters_is_read(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("text,label\n" + "a" * 200_000 + ",pos\n")
    assert len(read_table(path).rows[0]["text"]) == 200_000


def test_a_path_that_is_no_file_is_named_by_its_condition(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(DataError, match="loop: a symbolic link loop"):
        read_text_file(tmp_path / "loop")
    os.symlink(tmp_path / "gone.txt", tmp_path / "dangling")
    with pytest.raises(FileNotFoundError, match=r"dangling is a symbolic link to .*gone.txt, which does not exist"):
        check_file(tmp_path / "dangling")
    with pytest.raises(FileNotFoundError, match="file not found"):
        check_file(tmp_path / "nope.txt")
    with pytest.raises(DataError, match="is not a file: it is a folder"):
        check_file(tmp_path)
    (tmp_path / "cut.gz").write_bytes(gzip.compress(b"hello world\n" * 100)[:30])
    with pytest.raises(DataError, match="cut.gz: cannot be read \\(gzip data is damaged or cut short"):
        read_text_file(tmp_path / "cut.gz")


def test_archives_nested_compression_utf16_and_standard_input(tmp_path, monkeypatch):
    (tmp_path / "twice.gz").write_bytes(gzip.compress(gzip.compress(b"one\ntwo\n")))
    assert read_text_file(tmp_path / "twice.gz") == "one\ntwo\n"
    import tarfile

    with tarfile.open(tmp_path / "t.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "twice.gz", arcname="twice.gz")
    with pytest.raises(DataError, match="t.tar.gz: a tar archive, not one file"):
        read_text_file(tmp_path / "t.tar.gz")
    (tmp_path / "u16.txt").write_bytes("hello\n".encode("utf-16"))
    with pytest.raises(DataError, match="u16.txt: UTF-16 text"):
        read_inputs(str(tmp_path / "u16.txt"))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(b"a\nb\n")), encoding="utf-8"))
    assert read_inputs("-") == (["a", "b"], False)  # standard input is decompressed like a file


def test_pretraining_documents_come_from_records_whatever_the_form(tmp_path):
    from transformers_lite.data.documents import read_documents

    (tmp_path / "docs.json").write_text(json.dumps([{"text": "first doc"}, {"text": "second\ndoc"}]))
    assert read_documents(tmp_path / "docs.json") == ["first doc", "second\ndoc"]  # was split into JSON lines
    (tmp_path / "long.csv").write_text("text\n" + "a" * 200_000 + "\n")
    assert read_documents(tmp_path / "long.csv") == ["a" * 200_000]
    (tmp_path / "docs.jsonl.bz2").write_bytes(bz2.compress(b'{"review_body": "x", "stars": "1"}\n'))
    assert read_documents(tmp_path / "docs.jsonl.bz2") == ["x"]


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.text(st.sampled_from([*"ab ,\t{}", *IGNORABLE[:-1], "é"]), min_size=1, max_size=12).filter(
            lambda t: t.strip() and not t.strip().startswith("{")
        ),
        min_size=1,
        max_size=8,
    ),
    compression=st.sampled_from(list(COMPRESS)),
    case=st.sampled_from(["lower", "upper", "title"]),
    bom=st.booleans(),
    ending=st.sampled_from(["\n", "\r\n"]),
)
def test_every_line_reader_reads_the_same_lines_whatever_the_form(
    tmp_path_factory, lines, compression, case, bom, ending
):
    """Sentences for a translator, a generator's text and pretraining documents: the lines as written,
    compressed or not, a byte-order mark and Windows line endings removed, the name's case no matter."""
    from transformers_lite.data.documents import read_documents
    from transformers_lite.data.translation import sentence_lines

    raw = ("\ufeff" if bom else "").encode() + ending.join(lines).encode() + ending.encode()
    path = tmp_path_factory.mktemp("lines") / f"train{cased('.de' + compression, case)}"
    path.write_bytes(COMPRESS[compression](raw))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TliteWarning)  # nothing to say: the name tells the truth
        assert sentence_lines(path) == lines
        assert read_text_file(path) == "\n".join(lines) + "\n"
        assert read_documents(path) == lines


def test_labels_that_look_alike_are_one_class_and_spreadsheet_forms_are_read_or_named(tmp_path):
    from transformers_lite.data.reviews import class_names_of

    path = tmp_path / "r.jsonl"
    rows = [("a", "pos"), ("b", "pos\u200b"), ("c", "cafe\u0301"), ("d", "caf\u00e9"), ("e", "\ufeffpos ")]
    path.write_text("".join(json.dumps({"text": t, "label": lab}) + "\n" for t, lab in rows))
    assert class_names_of(load_reviews(path)) == ("café", "pos")  # as they look: 2 classes, not 5
    (tmp_path / "semi.csv").write_text("text;label\ngood box;pos\nbad box;neg\n")
    with pytest.warns(TliteWarning, match="semi.csv: line 1 is separated by semicolons"):
        assert load_reviews(tmp_path / "semi.csv").values == ["pos", "neg"]
    with zipfile.ZipFile(tmp_path / "book.xlsx", "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    with warnings.catch_warnings():
        warnings.simplefilter("error", TliteWarning)  # named as what it is, nothing said about its compression
        with pytest.raises(DataError, match="book.xlsx: an office document .*save it as CSV"):
            read_table(tmp_path / "book.xlsx")


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(UNREADABLE),
    tail=st.binary(max_size=40),
    suffix=st.sampled_from(["", ".txt", ".csv", ".jsonl", ".json", ".zst", ".TXT", ".zip"]),
    wrap=st.sampled_from(["", ".gz", ".bz2", ".xz"]),
)
def test_a_file_that_is_no_text_is_named_by_what_its_bytes_say(tmp_path_factory, kind, tail, suffix, wrap):
    """zstd, lz4, an empty zip, a 7-Zip or RAR archive, a PDF, an SQLite database: each is named as what
    its magic bytes say and what to do, whatever its name and compressed or not, never read as text that
    is "not UTF-8" nor as a file "not zip-compressed"."""
    magic, what, advice = kind
    path = tmp_path_factory.mktemp("magic") / f"data{suffix}{wrap}"
    path.write_bytes(COMPRESS[wrap](magic + tail))
    for read in (read_table, read_inputs, read_text_file):
        with pytest.raises(DataError) as err, warnings.catch_warnings():
            warnings.simplefilter("ignore", TliteWarning)  # a name the content overrules is said: not this test's
            read(str(path))
        assert str(err.value) == f"{path}: {what}, which cannot be read as text; {advice}"


JSON_VALUES = st.one_of(
    st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), st.text(max_size=10), st.just(42)
)


@settings(max_examples=60, deadline=None)
@given(value=JSON_VALUES, suffix=st.sampled_from([".json", ".jsonl", ".JSON"]), wrap=st.sampled_from(["", ".gz"]))
def test_a_json_file_holding_no_records_is_named_as_the_value_it_holds(tmp_path_factory, value, suffix, wrap):
    """A ``.json`` or ``.jsonl`` file whose content is one JSON value that is no record (``42``, ``"hi"``,
    ``null``) is said to hold that value, never read as plain text with a warning."""
    path = tmp_path_factory.mktemp("json") / f"data{suffix}{wrap}"
    path.write_bytes(COMPRESS[wrap](json.dumps(value).encode() + b"\n"))
    kind = json_kind(value)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TliteWarning)  # no "holds plain text" warning
        with pytest.raises(DataError, match=re.escape(kind)):
            read_table(path)
        with pytest.raises(DataError, match=re.escape(kind)):
            read_inputs(str(path))


@settings(max_examples=40, deadline=None)
@given(
    labels=st.lists(LABELS, min_size=2, max_size=8),
    bad=st.sampled_from(["NaN", "Infinity", "-Infinity"]),
    at=st.integers(0, 7),
)
def test_a_label_that_is_no_number_json_allows_is_refused_naming_its_record(tmp_path_factory, labels, bad, at):
    """Python's JSON reads ``NaN`` and ``Infinity``; as a label they are refused naming the line, as a
    ``null`` label is, never made a class "nan"."""
    at = min(at, len(labels))
    lines = [json.dumps({"text": f"text {i}", "label": label}) for i, label in enumerate(labels)]
    lines.insert(at, f'{{"text": "a text", "label": {bad}}}')
    path = tmp_path_factory.mktemp("nan") / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"labels\.jsonl:{at + 1}: the 'label' value is {bad}, which is no value"):
        load_reviews(path)

"""``read_inputs``: one text per line, lines end at ``\\n`` (or ``\\r\\n``) only, the same for a file and
for standard input, so output ``i`` always answers input line ``i``."""

import io
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformers_lite.data.inputs import read_inputs
from transformers_lite.errors import DataError

# any character but "\n", with the ones universal newlines or str.splitlines would break at made likely
LINE_CHARS = st.one_of(
    st.sampled_from(list("\r\v\f\x1c\x1d\x1e\x85\u2028\u2029\x00\t {}ab")),
    st.characters(codec="utf-8", exclude_characters="\n"),
)
# a text is a line with something in it; the first must not look like JSON or start with a byte-order mark
TEXTS = st.lists(st.text(LINE_CHARS, min_size=1, max_size=20).filter(str.strip), min_size=1, max_size=10).filter(
    lambda ts: not ts[0].lstrip().startswith(("{", "\ufeff"))
)


def encoded(texts: list[str], ending: str) -> bytes:
    return "".join(t + ending for t in texts).encode("utf-8")


def same_lines(got: list[str], texts: list[str]) -> bool:
    """Exactly the texts, in order; a text's own final "\\r" may go with the "\\n" after it (CRLF)."""
    return len(got) == len(texts) and all(g in (t, t.removesuffix("\r")) for g, t in zip(got, texts))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXTS, st.sampled_from(["\n", "\r\n"]))
def test_a_file_and_standard_input_give_the_same_lines(tmp_path, monkeypatch, texts, ending):
    path = tmp_path / "inputs.txt"
    path.write_bytes(encoded(texts, ending))
    from_file, jsonl = read_inputs(str(path))
    assert same_lines(from_file, texts) and not jsonl
    # standard input as the interpreter opens it: a text stream with universal newlines over the bytes
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(encoded(texts, ending)), encoding="utf-8"))
    assert read_inputs("-") == (from_file, False)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXTS)
def test_json_lines_give_their_texts_whatever_they_hold(tmp_path, texts):
    path = tmp_path / "inputs.jsonl"
    path.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")
    assert read_inputs(str(path)) == (texts, True)


def test_standard_input_of_a_real_process_keeps_separators_inside_lines():
    code = "from transformers_lite.data.inputs import read_inputs; print(repr(read_inputs('-')[0]))"
    data = "one\rstill one\u2028and\x85one\r\ntwo\vtwo\n".encode()
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True).stdout
    assert out.decode().strip() == repr(["one\rstill one\u2028and\x85one", "two\vtwo"])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"text": 5}, "inputs.jsonl:2: the 'text' field holds a number (5), not a string"),
        ({"text": {"a": 1}}, "inputs.jsonl:2: the 'text' field holds an object"),
        ({"text": ["a"]}, "inputs.jsonl:2: the 'text' field holds a list"),
        ({"text": None}, "inputs.jsonl:2: the 'text' field holds null"),
        ({"text": True}, "inputs.jsonl:2: the 'text' field holds a boolean"),
        ({"text": "  "}, "inputs.jsonl:2: empty input"),
        ({"other": "a"}, "inputs.jsonl:2: no 'text' field"),
        ([1, 2], "inputs.jsonl:2: a list, not a JSON object"),
    ],
)
def test_a_json_field_that_is_not_a_text_names_the_line_and_the_type(tmp_path, record, message):
    path = tmp_path / "inputs.jsonl"
    path.write_text('{"text": "fine"}\n' + json.dumps(record) + "\n")
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        read_inputs(str(path))


def test_files_that_cannot_be_inputs(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("ok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1.txt:2: bytes that are not UTF-8"):
        read_inputs(str(tmp_path / "latin1.txt"))
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(DataError, match="no input lines"):
        read_inputs(str(tmp_path / "empty.txt"))
    with pytest.raises(DataError, match="is not a file"):
        read_inputs(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="file not found"):
        read_inputs(str(tmp_path / "nope.txt"))
    (tmp_path / "bom.txt").write_bytes("\ufeffa\r\nb\r\n".encode())
    assert read_inputs(str(tmp_path / "bom.txt")) == (["a", "b"], False)

"""The learner's record of exercises (``exercises/progress.py``): a file that cannot be read is named and
left as it is, never replaced by a fresh record that would lose the exercises it holds."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformers_lite.cli.main import main
from transformers_lite.errors import DataError
from transformers_lite.exercises import EXERCISES, exercise, progress

NAMES = st.sampled_from(["dense-forward", "relu-backward", "softmax-backward", "an-exercise-of-another-release"])
ENTRY = st.fixed_dictionaries(
    {}, optional={"passed": st.sampled_from(["2024-01-01T00:00:00+00:00", True]), "hints": st.integers(0, 5)}
)
RECORDS = st.dictionaries(NAMES, ENTRY, max_size=4)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _edited(record: dict, cut: int, kind: str) -> bytes:
    """A record as a hand edit or a crash of another program leaves it."""
    text = json.dumps(record, indent=1)
    if kind == "cut":  # a partial write
        return text.encode()[: min(cut, len(text) - 1)]
    if kind == "trailing comma":
        return (text.rstrip("}").rstrip() + ",\n}").encode() if record else b"{,}"
    return text.replace("{", "{{", 1).encode()  # a stray brace


CORRUPT = st.one_of(
    st.binary(max_size=64).filter(lambda b: not _reads(b)),
    st.builds(_edited, RECORDS, st.integers(0, 200), st.sampled_from(["cut", "trailing comma", "brace"])),
    JSON.filter(lambda v: progress.problem(v) is not None).map(lambda v: json.dumps(v).encode()),
    RECORDS.filter(bool).flatmap(  # an entry's field of another kind: "hints": "two"
        lambda r: st.sampled_from(sorted(r)).map(lambda n: json.dumps({**r, n: {"hints": "two"}}).encode())
    ),
)


def _reads(raw: bytes) -> bool:
    try:
        return progress.problem(json.loads(raw.decode("utf-8"))) is None
    except ValueError:
        return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=CORRUPT)
def test_a_record_that_cannot_be_read_is_named_and_left_as_it_is(tmp_path, monkeypatch, capsys, content):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = progress.progress_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    with pytest.raises(DataError) as err:
        progress.record("relu-backward", hints=1)
    assert str(path) in str(err.value) and "left as it is" in str(err.value)
    for command in (["exercise", "list"], ["exercise", "hint", "relu-backward"]):
        assert main(command) == 1
        [line] = capsys.readouterr().err.strip().splitlines()
        assert line.startswith(f"tlite: error: {path}: ") and "left as it is" in line
    assert path.read_bytes() == content


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(record=RECORDS)
def test_a_hint_keeps_every_exercise_recorded(tmp_path, monkeypatch, capsys, record):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = progress.progress_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    assert main(["exercise", "hint", "dense-forward"]) == 0
    after = json.loads(path.read_text())
    others = {n: e for n, e in record.items() if n != "dense-forward"}
    assert {n: e for n, e in after.items() if n != "dense-forward"} == others
    seen, hints = record.get("dense-forward", {}).get("hints", 0), len(exercise("dense-forward").hints)
    assert after["dense-forward"]["hints"] == max(seen, min(seen + 1, hints))
    capsys.readouterr()
    assert main(["exercise", "list"]) == 0
    done = sum(1 for n, e in record.items() if e.get("passed") and n in {x.name for x in EXERCISES})
    assert f"\n{done} of {len(EXERCISES)} done" in capsys.readouterr().out

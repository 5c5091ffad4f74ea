"""Input read as it looks, and messages that name the condition (reliability classes 4 and 7), through
the runs: an invisible character changes no prediction, text a model never saw is said in every view,
and the messages about labels, pairs and parallel files name the record, line or field and what holds."""

import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite.data.reviews import choose_classes, load_reviews
from transformers_lite.data.translation import load_pairs, load_parallel
from transformers_lite.errors import ConfigError, DataError, TliteWarning

from .conftest import KEYWORDS, cli, files, runs  # noqa: F401 - fixtures reused here

INVISIBLE = ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


@settings(max_examples=30, deadline=None)
@given(
    words=st.lists(st.sampled_from(["the", "box", "was", *KEYWORDS.values(), "family"]), min_size=1, max_size=8),
    inserts=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(INVISIBLE)), min_size=1, max_size=4),
)
def test_an_invisible_character_does_not_change_a_prediction(runs, words, inserts):  # noqa: F811
    run = tl.load(runs / "classifier")
    text = " ".join(words)
    marked = text
    for at, char in sorted(inserts, reverse=True):
        marked = marked[:at] + char + marked[at:]
    plain, soft = run.classify([text, marked])
    assert soft["prediction"] == plain["prediction"] and soft["probabilities"] == plain["probabilities"]


def test_a_soft_hyphen_does_not_change_the_prediction(runs):  # noqa: F811
    run = tl.load(runs / "classifier")
    assert (
        run.classify("the box was su\u00adperb")["probabilities"] == run.classify("the box was superb")["probabilities"]
    )


def test_text_the_model_never_saw_is_said_in_the_generators_trace(runs):  # noqa: F811
    run = tl.load(runs / "generator")
    notes = run.trace("Ω Ω Ω").notes  # was shown as Ø Ø Ø without a word
    assert any("characters the model never saw in training ('Ω'; 3 tokens)" in n for n in notes)
    assert run.trace("Before").notes == []


def test_a_translators_unknown_target_and_source_are_said(runs):  # noqa: F811
    run = tl.load(runs / "seq2seq")
    notes = run.trace("alpha beta", target="omega omega").notes
    assert any(n.startswith("the target has words the model never saw in training ('omega'; 2 tokens)") for n in notes)
    notes = run.trace("alpha zzz beta", target="beta alpha").notes
    assert any(n.startswith("the source has words the model never saw in training ('zzz'; 1 token)") for n in notes)
    with pytest.warns(TliteWarning, match=r"text 1 has words the model never saw in training \('zzz'; 1 token\)"):
        run.translate("alpha zzz")


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.sampled_from(["1", "2", "3", "4", "5"]), min_size=2, max_size=20),
    mapping=st.dictionaries(st.sampled_from(["1", "2", "3", "4", "5", "9"]), st.sampled_from(["", "neg", "pos"])),
)
def test_a_label_map_is_refused_only_naming_what_it_keeps(tmp_path_factory, values, mapping):
    path = tmp_path_factory.mktemp("labels") / "r.jsonl"
    path.write_text("".join(json.dumps({"text": "good box", "label": v}) + "\n" for v in values))
    reviews = load_reviews(path)
    label_map = ",".join(f"{k}={v}" for k, v in mapping.items())
    kept = {mapping[v] for v in values if mapping.get(v)}
    if not mapping:
        return
    try:
        with warnings.catch_warnings():  # a value of the map no record has is warned about: tested elsewhere
            warnings.simplefilter("ignore")
            n, names = choose_classes(reviews, None, label_map)
    except (DataError, ConfigError) as err:
        message = str(err)
        assert "()" not in message  # was "one class only ()"
        if len(kept) < 2:
            assert f"--label-map {label_map!r} keeps" in message and "whose values are" in message
        typos = [repr(v) for v in mapping if v not in values]  # values of the map no record has: named
        assert all(typo in message for typo in typos)
        return
    assert len(kept) >= 2 and n == len(names) >= 2


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"translation": {"de": "Hund", "en": "dog"}}, None),
        ({"translation": {"de": "Hund", "en": None}}, r"r.jsonl:2: the 'en' sentence holds null, not a sentence"),
        ({"translation": {"de": "Hund"}}, r"r.jsonl:2: the 'en' sentence has no such field \(fields: 'de'\)"),
        ({"translation": {"de": "Hund", "en": 3}}, r"r.jsonl:2: the 'en' sentence holds a number"),
    ],
)
def test_a_missing_sentence_names_the_record_the_field_and_what_it_holds(tmp_path, record, message):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"translation": {"de": "Katze", "en": "cat"}}) + "\n" + json.dumps(record) + "\n")
    if message is None:
        assert load_pairs(path, columns=("de", "en")).tgt == ["cat", "dog"]
    else:
        with pytest.raises(DataError, match=message):
            load_pairs(path, columns=("de", "en"))


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(st.text("abc xyz", min_size=1, max_size=8).filter(str.strip), min_size=1, max_size=10),
    at=st.data(),
)
def test_a_lone_carriage_return_in_a_parallel_file_is_named_and_keeps_the_files_aligned(tmp_path_factory, lines, at):
    folder = tmp_path_factory.mktemp("cr")
    line = at.draw(st.integers(0, len(lines) - 1))
    cut = at.draw(st.integers(1, max(1, len(lines[line]) - 1)))
    src = list(lines)
    src[line] = src[line][:cut] + "\r" + src[line][cut:] + " end"
    (folder / "a.de").write_text("\n".join(src) + "\n", newline="")
    (folder / "a.en").write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        de, en = load_parallel(folder / "a.de", folder / "a.en")  # was "parallel files differ in length"
    assert len(de) == len(en) == len(lines)
    said = [str(w.message) for w in caught if issubclass(w.category, TliteWarning)]
    assert any(
        f"a.de: 1 line(s) hold a carriage return (\\r, U+000D) inside the line (line {line + 1})" in s for s in said
    )


def test_inspect_trace_says_on_the_terminal_what_the_model_never_saw(cli, runs, tmp_path):  # noqa: F811
    result = cli("inspect", "trace", runs / "generator", "--text", "Ω Ω Ω", "--out", tmp_path)
    assert result.code == 0
    assert any(
        line.startswith("tlite: warning: the prompt has characters the model never saw") for line in result.lines
    )
    assert "never saw" in " ".join(json.loads((tmp_path / "trace.json").read_text())["notices"])


def test_a_link_loop_and_a_link_to_nothing_are_named_by_every_reader(cli, tmp_path):  # noqa: F811
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for args in (["generator", "--text"], ["classifier", "--train"], ["seq2seq", "--train-src"]):
        result = cli("train", *args, tmp_path / "loop", "--out", tmp_path / "out")
        assert result.code == 1 and "loop: a symbolic link loop" in result.err  # was "file not found"
        result = cli("train", *args, tmp_path / "dangling", "--out", tmp_path / "out")
        assert result.code == 1 and "dangling is a symbolic link to" in result.err
    assert not (tmp_path / "out").exists()


def test_the_inspectors_classify_and_translate_views_name_what_the_model_never_saw(runs):  # noqa: F811
    from transformers_lite.server import views

    notices = views.translate_view(tl.load(runs / "seq2seq"), "alpha zzz", 1)["notices"]
    assert any(n.startswith("the text has words the model never saw in training ('zzz'; 1 token)") for n in notices)
    notices = views.classify_view(tl.load(runs / "classifier"), "the box was zzqq zzqq")["notices"]
    assert any("('zzqq'; 2 tokens)" in n for n in notices)


@settings(max_examples=25, deadline=None)
@given(
    known=st.text("Before wpcdhakilsu ,.\n", min_size=20, max_size=60),
    unknown=st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from(["\u00ad", "Ä", "Z", "€", "ß", "\u200b"])), max_size=4
    ),
)
def test_text_the_training_data_never_had_is_named_when_a_run_is_evaluated_on_it(
    runs,  # noqa: F811
    tmp_path_factory,
    known,
    unknown,
):
    """Evaluating on a text with characters no training text held (a soft hyphen, another alphabet) says
    which and how many tokens they take, beside the scores; a text the model reads whole is scored without a word."""
    text = known
    for at, char in unknown:
        text = text[:at] + char + text[at:]
    path = tmp_path_factory.mktemp("eval") / "text.txt"
    path.write_text(text * 3)
    run = tl.load(runs / "generator")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run.evaluate(path)
    said = [str(w.message) for w in caught if "never saw in training" in str(w.message)]
    never = sorted({c for _, c in unknown})
    assert result["n_tokens"] > 0
    if not never:
        assert not said
        return
    [line] = said
    assert line.startswith(f"{path} has characters the model never saw in training (")
    assert all(repr(c) in line for c in never) and f"{3 * len(unknown):,} token" in line

"""A conversion's failures are one line naming the file (``interop/gpt2.py``): an export to a disk that is
full or refuses the size, an import of a folder whose ``config.json`` is malformed or lacks a field.
Needs no ``transformers``: the folder imported is this package's own export."""

import errno
import json
import os
import resource
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors import SafetensorError

from transformers_lite.cli.main import main
from transformers_lite.interop.gpt2 import REQUIRED

from ..helpers import sets

GPT2_SHAPED = sets(
    "dim=16", "n_heads=2", "dim_hidden=32", "n_blocks=1", "max_length=16", "norm_first=true", "final_norm=true"
) + sets("qkv_bias=true", "head_bias=false", "activation=gelu_tanh")
CODES = [errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO, errno.EROFS]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A GPT-2-shaped generator run (one step, GPT-2's byte-level BPE) and its export."""
    folder = tmp_path_factory.mktemp("interop")
    (folder / "t.txt").write_text("To be, or not to be, that is the question.\n" * 20)
    run = folder / "run"
    assert (
        main(
            [
                "train",
                "generator",
                "--text",
                str(folder / "t.txt"),
                *GPT2_SHAPED,
                "--tokenizer",
                "bpe",
                "--vocab-size",
                "300",
                "--max-steps",
                "1",
                "--out",
                str(run),
            ]
        )
        == 0
    )
    assert main(["export-hf", str(run), str(folder / "hf")]) == 0
    return run, folder / "hf"


def one_error(capsys) -> str:
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("tlite: error: ") and "internal error" not in line, line
    return line


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    code=st.sampled_from(CODES), file=st.sampled_from(["model.safetensors", "config.json", "vocab.json", "merges.txt"])
)
def test_an_export_the_disk_refuses_is_one_line_naming_the_file(
    exported, tmp_path_factory, capsys, monkeypatch, code, file
):
    """Whichever file the disk refuses, for whatever reason the system gives (full, over a quota, too large,
    read-only, an I/O error), the export ends in one line naming that file and the reason."""
    run, _ = exported
    out = tmp_path_factory.mktemp("export") / "out"
    reason = os.strerror(code)

    def refuse_safetensors(*args, **kwargs):
        raise SafetensorError(f"Error while serializing: I/O error: {reason} (os error {code})")

    real_replace = os.replace

    def refuse_json(src, dst):
        if os.path.basename(dst) == file:
            raise OSError(code, reason)
        return real_replace(src, dst)

    capsys.readouterr()
    with monkeypatch.context() as patch:
        if file == "model.safetensors":
            patch.setattr("transformers_lite.runs.files.save_file", refuse_safetensors)
        else:
            patch.setattr("transformers_lite.atomic.os.replace", refuse_json)
        assert main(["export-hf", str(run), str(out)]) == 1
    line = one_error(capsys)
    assert line.startswith(f"tlite: error: cannot write {out / file}: ") and reason in line, line
    assert not out.exists()  # nothing half made: the same command works once the disk has room


def test_an_export_larger_than_the_file_size_limit_is_named(exported, tmp_path, capsys):
    """A real refusal: a file-size limit (``ulimit -f``) makes the weights' write fail with EFBIG."""
    run, _ = exported
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, hard))
    try:
        code = main(["export-hf", str(run), str(tmp_path / "out")])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert code == 1
    assert one_error(capsys) == (
        f"tlite: error: cannot write {tmp_path / 'out' / 'model.safetensors'}: safetensors could not write it: "
        "File too large"
    )


EDITS = st.one_of(
    st.sets(st.sampled_from(REQUIRED), min_size=1).map(lambda keys: ("drop", sorted(keys))),
    st.tuples(
        st.sampled_from([*REQUIRED, "n_inner", "layer_norm_epsilon", "resid_pdrop", "tie_word_embeddings"]),
        st.sampled_from(["32", None, [32], 0, -4, 2.5, True, {"n": 1}, "nan"]),
    ).map(lambda kv: ("set", kv)),
    st.sampled_from(['{"model_type": "gpt2",}', "[1, 2]", "42", "", "\u00ff\u00fe", "null"]).map(lambda t: ("text", t)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edit=EDITS)
def test_a_config_json_that_is_no_gpt2_config_is_one_line_naming_it(exported, tmp_path_factory, capsys, edit):
    """A ``config.json`` edited by hand or written by another tool (a field missing, a field of another
    type, broken JSON, a value that is no object) is refused naming the file and the field as the file
    names it (``n_embd``, not ``dim``); never an internal error, never a folder half written."""
    _, hf = exported
    folder = tmp_path_factory.mktemp("hf") / "hf"
    shutil.copytree(hf, folder)
    config = json.loads((folder / "config.json").read_text())
    kind, what = edit
    if kind == "drop":
        text = json.dumps({k: v for k, v in config.items() if k not in what})
    elif kind == "set":
        text = json.dumps({**config, what[0]: what[1]})
    else:
        text = what
    (folder / "config.json").write_text(text)
    out = folder.parent / "imported"
    capsys.readouterr()
    code = main(["import-hf", str(folder), str(out)])
    if code == 0:  # an edit that still describes these weights (n_inner 32, dropout 0, ...)
        assert main(["generate", str(out), "--max-new-tokens", "2"]) == 0
        return
    line = one_error(capsys)
    assert str(folder / "config.json") in line or str(folder / "model.safetensors") in line, line
    if kind == "drop":
        assert f"no {', '.join(k for k in REQUIRED if k in what)}" in line, line
    if kind == "set" and str(folder / "config.json") in line and what[0] in REQUIRED:
        assert what[0] in line, line
    assert not out.exists()

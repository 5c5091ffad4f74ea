"""Where a conversion may write, over generated folders: never its source, never a run, others on --force."""

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite.errors import RunError
from transformers_lite.interop.folders import check_output_folder, holds_run

CONTENTS = {  # what a folder may hold, and whether it makes the folder a run
    "run config": ("config.json", json.dumps({"family": "generator"}), True),
    "hf config": ("config.json", json.dumps({"model_type": "gpt2"}), False),
    "broken config": ("config.json", "{not json", False),
    "hyperparameters": ("hyperparameters.json", "{}", True),
    "checkpoint": ("checkpoint/state.pt", "", True),
    "notes": ("notes.txt", "mine", False),
}


@settings(max_examples=80, deadline=None)
@given(
    contents=st.lists(st.sampled_from(sorted(CONTENTS)), max_size=3, unique_by=lambda k: CONTENTS[k][0]),
    where=st.sampled_from(["new", "existing", "source", "inside source", "source's parent"]),
    force=st.booleans(),
)
def test_an_output_folder_is_refused_exactly_when_writing_would_lose_files(contents, where, force):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "parent"
        source = base / "source"
        (source / "sub").mkdir(parents=True)
        (source / "model.safetensors").write_text("weights")
        out = {
            "new": base / "out",
            "existing": base / "out",
            "source": source,
            "inside source": source / "sub",
            "source's parent": base,
        }[where]
        if where != "new":
            out.mkdir(exist_ok=True)
            for key in contents:
                name, text, _ = CONTENTS[key]
                (out / name).parent.mkdir(parents=True, exist_ok=True)
                (out / name).write_text(text)
        before = sorted(p.relative_to(base) for p in base.rglob("*"))
        is_run = where != "new" and any(CONTENTS[k][2] for k in contents)
        has_files = out.is_dir() and any(out.iterdir())
        if where in ("source", "inside source"):
            expected = "itself or inside it"
        elif is_run:
            expected = "already holds a run"
        elif has_files and not force:
            expected = "is not empty"
        else:
            expected = None
        if expected is None:
            assert check_output_folder(out, source, force) == out
        else:
            with pytest.raises(RunError, match=expected) as err:
                check_output_folder(out, source, force)
            assert str(out) in str(err.value) and "\n" not in str(err.value)
        assert sorted(p.relative_to(base) for p in base.rglob("*")) == before  # the check writes nothing
        assert holds_run(out) == is_run

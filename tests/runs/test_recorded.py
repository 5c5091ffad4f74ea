"""A check is never looser than the code that applies it: every file a run reads is in its manifest
(an entry removed is named), the recorded settings read back from ``hyperparameters.json`` are checked
by the classes training applies (``settings.from_record``), and a setting given where it does
not apply is refused instead of recorded and ignored."""

import dataclasses
import json
import math
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite import ConfigError
from transformers_lite.recipes.resume import recorded_recipe
from transformers_lite.runs.manifest import MANIFEST, sha256
from transformers_lite.settings import TrainConfig, inapplicable
from transformers_lite.tasks.generator import GeneratorSettings

from .test_manifest import _train

READ = ("hyperparameters.json", "config.json", "tokenizer.json", "model.safetensors")
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**40), 2**40),
    st.sampled_from(["abc", "", "1e-3", None, True, [], {}]),
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("recorded")
    return _train(tmp, tmp / "run").run_dir


def _copy(run_dir, factory):
    copy = factory.mktemp("copy") / "run"
    shutil.copytree(run_dir, copy)
    return copy


# each way in, and the files it reads (a load reads the weights; a resume reads the checkpoint's)
WAYS = {
    "load": ({"config.json", "tokenizer.json", "model.safetensors"}, lambda run: tl.load(run)),
    "settings": ({"hyperparameters.json"}, lambda run: _settings_checked(run)),
    "resume": (
        {"hyperparameters.json", "config.json", "tokenizer.json"},
        lambda run: recorded_recipe(run).run(resume_dir=run, log=lambda *_: None),
    ),
}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(removed=st.lists(st.sampled_from(READ), min_size=1, max_size=4, unique=True), way=st.sampled_from(list(WAYS)))
def test_an_entry_removed_from_the_manifest_for_a_file_the_run_reads_is_named(run_dir, tmp_path_factory, removed, way):
    copy = _copy(run_dir, tmp_path_factory)
    manifest = json.loads((copy / MANIFEST).read_text())
    for name in removed:
        del manifest["sha256"][name]
    (copy / MANIFEST).write_text(json.dumps(manifest))
    reads, read = WAYS[way]
    if not reads & set(removed):
        read(copy)  # nothing it reads lost its entry: it works
        return
    if not manifest["sha256"]:  # every entry removed: the manifest itself is named as recording nothing
        with pytest.raises(ValueError, match="records no file"):
            read(copy)
        return
    with pytest.raises(ValueError, match="has no entry for") as err:
        read(copy)
    assert any(f"no entry for {name}" in str(err.value) for name in reads & set(removed))


def _settings_checked(run):
    """The recorded settings of a run whose other files load, checked against the manifest."""
    loaded = tl.load(run, trust_edited=True)
    loaded.trust_edited = False  # the settings alone are checked
    return loaded.hyperparameters


def test_a_manifest_of_an_earlier_release_still_loads_without_hyperparameters_listed(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    manifest = json.loads((copy / MANIFEST).read_text())
    del manifest["sha256"]["hyperparameters.json"], manifest["format"]  # as 0.3 wrote it
    (copy / MANIFEST).write_text(json.dumps(manifest))
    assert tl.load(copy).hyperparameters["train"]["lr"] == 1e-3


def test_an_edited_hyperparameters_json_is_named_by_the_manifest(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    hyper = json.loads((copy / "hyperparameters.json").read_text())
    hyper["train"]["lr"] = 0.5  # a valid value: only the manifest can tell
    (copy / "hyperparameters.json").write_text(json.dumps(hyper))
    with pytest.raises(ValueError, match="hyperparameters.json was changed after the run wrote it"):
        tl.load(copy).hyperparameters  # noqa: B018
    assert tl.load(copy, trust_edited=True).hyperparameters["train"]["lr"] == 0.5


def _accepts(build):
    try:
        build()
    except (ValueError, TypeError):
        return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    where=st.sampled_from(
        [("train", "lr"), ("train", "beta2"), ("train", "seed"), ("train", "accumulate"), ("data", "val_fraction")]
        + [("data", "batch_size"), ("", "seed")]
    ),
    value=NUMBERS,
)
def test_recorded_settings_are_checked_as_training_checks_them(run_dir, tmp_path_factory, where, value):
    copy = _copy(run_dir, tmp_path_factory)
    hyper = json.loads((copy / "hyperparameters.json").read_text())
    section, name = where
    (hyper[section] if section else hyper)[name] = value
    (copy / "hyperparameters.json").write_text(json.dumps(hyper))  # json writes inf and NaN as Infinity, NaN
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["sha256"]["hyperparameters.json"] = sha256(copy / "hyperparameters.json")  # the manifest agrees
    (copy / MANIFEST).write_text(json.dumps(manifest))
    train, data = (
        hyper["train"],
        {k: v for k, v in hyper["data"].items() if k in GeneratorSettings.__dataclass_fields__},
    )
    if section == "train":
        expected = _accepts(lambda: TrainConfig(**train))
    elif section == "data":
        expected = _accepts(lambda: GeneratorSettings(**data))
    else:
        expected = _accepts(lambda: TrainConfig(**{**train, "seed": value}))
    if name == "seed":  # recorded twice (the top-level copy is what evaluate's split reads): they must agree
        expected = expected and (hyper["seed"] == train["seed"])
    run = tl.load(copy)
    if expected:
        assert run.hyperparameters[section][name] == value if section else run.hyperparameters[name] == value
    else:
        with pytest.raises(ValueError, match=name) as err:  # named where it is read, not where it is used
            run.hyperparameters  # noqa: B018
        assert "hyperparameters.json" in str(err.value)
        assert "could not convert" not in str(err.value)
        # resuming reads the train section through the same check (it reads train.seed, not the top-level
        # copy evaluate's split reads, so a disagreement of the two alone does not stop a resume)
        if section == "train" and not _accepts(lambda: TrainConfig(**train)):
            with pytest.raises(ValueError, match=rf"hyperparameters.json: .*{name}"):
                recorded_recipe(copy)


def test_one_step_reads_the_recorded_learning_rate_or_names_it(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    hyper = json.loads((copy / "hyperparameters.json").read_text())
    hyper["train"]["lr"] = math.inf
    (copy / "hyperparameters.json").write_text(json.dumps(hyper))
    run = tl.load(copy, trust_edited=True)
    with pytest.raises(ValueError, match="lr must be a finite number > 0, got inf"):
        run.take_step("To be, or not")
    with pytest.raises(ValueError, match="lr must be a finite number"):
        tl.load(run_dir).take_step("To be, or not", lr="abc")


# every setting that applies only with another setting's values (its ``applies``), in every family
APPLIES = [
    (fam.name, fam.task.Settings, f.name, f.metadata["applies"])
    for fam in tl.FAMILIES.values()
    for f in dataclasses.fields(fam.task.Settings)
    if "applies" in f.metadata
]


def _others(cls, depends, values):
    """Values of ``depends`` to try: the ones with which the setting applies, its other choices, a file."""
    choices = cls.__dataclass_fields__[depends].metadata.get("choices")
    return [*values, *(choices or ["some-file.txt"])]  # a choice, or (a file setting) a file


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(APPLIES), pick=st.integers(0, 10))
def test_a_setting_that_would_be_ignored_is_refused(case, pick):
    family, cls, name, (depends, values) = case
    options = _others(cls, depends, values)
    chosen = options[pick % len(options)]
    preset = tl.get_preset(tl.FAMILIES[family].default_preset).override(**{depends: chosen})
    given_value = getattr(preset.data, name)  # its own value, given: still a setting the user gave
    if chosen in values:
        assert inapplicable(preset.data, [name]) is None
        assert getattr(preset.override(**{name: given_value}).data, name) == given_value
    else:
        option, dep = f"--{name.replace('_', '-')}", f"--{depends.replace('_', '-')}"
        with pytest.raises(ConfigError, match=rf"{name} \({option}\) is used only when {depends} \({dep}\) is") as err:
            preset.override(**{name: given_value})
        assert repr(chosen) in str(err.value)

"""The Python API checks its arguments where they enter (``validate.arguments`` on every public method of
``Run`` and on ``load``): a value of another type is a ``ConfigError`` naming the argument, never an
``AttributeError`` or ``TypeError`` from deep inside, nor an option that is accepted and ignored."""

import inspect
import os
import types
import typing
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformers_lite as tl
from transformers_lite.errors import ConfigError
from transformers_lite.pipeline import Run

from .reliability.conftest import files, runs  # noqa: F401 - fixtures reused here

PUBLIC = sorted(n for n, f in vars(Run).items() if callable(f) and not n.startswith("_") and n != "check_recorded")
VALUES = [None, 5, -1, 2.5, float("nan"), True, "text", b"bytes", ["a", 5], [None], ("a",), {"a": 1}, object()]
NEEDED = {"text": "good", "prompt": "good", "texts": ["good"]}  # a valid value of each required argument


def fits(value: object, hint: object) -> bool:
    """The test's own reading of a type hint, for the hints the API uses."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, a) for a in args)
    if origin in (list, tuple, Sequence):
        return isinstance(value, (list, tuple)) and all(fits(v, args[0]) for v in value)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint in (int, float):
        return isinstance(value, (int, float) if hint is float else int) and not isinstance(value, bool)
    if hint is Path or origin is os.PathLike:
        return isinstance(value, os.PathLike)
    return isinstance(value, hint)


CASES = [
    (name, parameter, value)
    for name in PUBLIC
    for parameter, hint in typing.get_type_hints(getattr(Run, name).__wrapped__).items()
    if parameter != "return"
    for value in VALUES
    if not fits(value, hint)
]


def test_every_public_method_of_a_run_checks_its_arguments():
    assert PUBLIC and all(getattr(getattr(Run, n), "checks_arguments", False) for n in PUBLIC), PUBLIC
    assert getattr(tl.load, "checks_arguments", False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(CASES))
def test_an_argument_of_another_type_is_refused_naming_it(runs, case):  # noqa: F811
    name, parameter, value = case
    run = tl.load(runs / "classifier")
    method = getattr(run, name)
    required = [p for p, s in inspect.signature(method).parameters.items() if s.default is s.empty and p in NEEDED]
    arguments = {p: NEEDED[p] for p in required} | {parameter: value}
    with pytest.raises(ConfigError) as err:
        method(**arguments)
    assert str(err.value).startswith(f"{parameter} must be "), str(err.value)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda run: run.classify(["great", 5]), "texts must be a string or a list of strings; texts[1] is 5 (int)"),
        (lambda run: run.classify(None), "texts must be a string or a list of strings, got None"),
        (lambda run: run.evaluate(42), "data must be a string, a path or None, got 42 (int)"),
        (lambda run: run.evaluate(bem=4), "evaluate() of a classifier run takes no option 'bem'; its options: plots"),
        (lambda run: run.evaluate(src="x.de"), "takes no option 'src'"),
        (lambda run: tl.load(5), "run_dir must be a string or a path, got 5 (int)"),
        (lambda run: tl.load(run.run_dir, trust_edited="no"), "trust_edited must be True or False, got 'no'"),
    ],
)
def test_the_examples_name_the_argument(runs, call, message):  # noqa: F811
    with pytest.raises(ConfigError) as err:
        call(tl.load(runs / "classifier"))
    assert message in str(err.value)

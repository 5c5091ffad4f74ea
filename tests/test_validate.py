"""The checks every setting goes through: what they accept, and messages that are true of what they refuse."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformers_lite import validate
from transformers_lite.errors import ConfigError

BOUNDS = st.one_of(st.none(), st.floats(-10, 10, allow_nan=False))
ANY_NUMBER = st.one_of(
    st.floats(),  # nan, inf, -inf, huge, tiny, negative zero
    st.integers(-(10**400), 10**400),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e-300, -1e-300, 1e308, 5e-324]),
)


@given(ANY_NUMBER, BOUNDS, BOUNDS, st.booleans(), st.booleans())
def test_number_accepts_exactly_finite_values_in_range_and_says_why_not(value, low, high, low_open, high_open):
    try:
        validate.number("alpha", value, low, high, low_open=low_open, high_open=high_open)
    except ConfigError as err:
        message = str(err)
        assert message.startswith("alpha must be a ") and message.endswith(f"got {value!r}")
        assert "inf]" not in message and "[-inf" not in message  # never an interval that holds infinities
        if low is None or high is None:
            assert "a finite number" in message
        return
    value = float(value)
    assert math.isfinite(value)
    assert low is None or (value > low if low_open else value >= low)
    assert high is None or (value < high if high_open else value <= high)


def test_number_messages():
    cases = [
        (dict(value=math.inf, low=0), "t must be a finite number >= 0, got inf"),
        (dict(value=math.nan, low=0, low_open=True), "t must be a finite number > 0, got nan"),
        (dict(value=2.0, high=1, high_open=True), "t must be a finite number < 1, got 2.0"),
        (dict(value=-math.inf), "t must be a finite number, got -inf"),
        (dict(value=1.5, low=0, high=1, high_open=True), "t must be a number in [0, 1), got 1.5"),
        (dict(value=10**400, low=0), "t must be a finite number >= 0, got 1000"),
        (dict(value=True, low=0), "t must be a finite number >= 0, got True"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ConfigError) as err:
            validate.number("t", **kwargs)
        assert str(err.value).startswith(message)
    validate.number("t", None, 0, optional=True)


@given(st.one_of(st.integers(-(2**70), 2**70), st.floats(), st.booleans(), st.none(), st.text(max_size=3)))
def test_seed_is_an_integer_that_every_random_generator_takes(value):
    try:
        validate.seed("seed", value)
    except ConfigError as err:
        assert str(err) == f"seed must be an integer in [0, {validate.SEED_MAX}], got {value!r}"
        assert not (type(value) is int and 0 <= value <= validate.SEED_MAX)
        return
    assert type(value) is int and 0 <= value <= 2**32 - 1


def test_integer_with_and_without_an_upper_end():
    validate.integer("n", 3, 1, high=3)
    with pytest.raises(ConfigError, match=r"n must be an integer in \[1, 3\], got 4"):
        validate.integer("n", 4, 1, high=3)
    with pytest.raises(ConfigError, match="n must be an integer >= 1, got 2.0"):
        validate.integer("n", 2.0)
    validate.integer("n", None, optional=True)


def _settings_classes():
    from transformers_lite.config import ClassifierConfig, EncoderLMConfig, GeneratorConfig, Seq2SeqConfig
    from transformers_lite.generation.translate import DecodeSettings
    from transformers_lite.settings import TrainConfig
    from transformers_lite.tasks import ClassifierSettings, GeneratorSettings, MaskedLMSettings, Seq2SeqSettings

    return [
        ClassifierConfig, EncoderLMConfig, GeneratorConfig, Seq2SeqConfig, DecodeSettings, TrainConfig,
        ClassifierSettings, GeneratorSettings, MaskedLMSettings, Seq2SeqSettings,
    ]  # fmt: skip


@given(st.data(), st.one_of(st.text(max_size=6), st.integers(-2, 2), st.none(), st.floats(), st.lists(st.booleans())))
def test_a_true_or_false_setting_takes_only_true_or_false(data, value):
    """``"false"`` in a config file (or from Python) once counted as true: every ``bool`` field of every
    config and settings class refuses anything but a bool (a ``bool | None`` field also takes None), naming
    the field and the value."""
    import dataclasses

    cls = data.draw(st.sampled_from(_settings_classes()))
    optional = {f.name for f in dataclasses.fields(cls) if f.type == "bool | None"}  # None: decided from the data
    flags = [f.name for f in dataclasses.fields(cls) if f.type in ("bool", bool)] + sorted(optional)
    if not flags:
        return
    name = data.draw(st.sampled_from(flags))
    base = {"epochs": 1} if cls.__name__ == "TrainConfig" else {}  # a TrainConfig needs a limit
    if name in optional and value is None:
        return
    allowed = "true, false or null" if name in optional else "true or false"
    with pytest.raises(ConfigError, match=f"{name} must be {allowed}, got"):
        cls(**base, **{name: value})
    assert getattr(cls(**base, **{name: True}), name) is True and getattr(cls(**base, **{name: False}), name) is False
    if name in optional:
        assert getattr(cls(**base, **{name: None}), name) is None

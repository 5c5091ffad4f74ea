"""Every number in an inspector request is finite (``server/routes.py: Body``): ``NaN``, ``Infinity`` and
``-Infinity``, which Python's JSON reads, are refused as not finite, never as "should be <= 10"."""

import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformers_lite.server import routes

MODELS = [
    m
    for m in vars(routes).values()
    if isinstance(m, type) and issubclass(m, routes.BaseModel) and m not in (routes.BaseModel, routes.Body)
]
NUMBER_FIELDS = [
    (model, name)
    for model in MODELS
    for name, info in model.model_fields.items()
    if float in (info.annotation, *typing.get_args(info.annotation))
]
REQUIRED = {"prompt": "Be", "context": "Be", "text": "Be", "name": "x", "code": "x"}


def test_every_request_body_is_a_body():
    assert MODELS and all(issubclass(m, routes.Body) for m in MODELS), MODELS
    assert NUMBER_FIELDS  # temperature, top_p, lr, ...


@settings(max_examples=40, deadline=None)
@given(field=st.sampled_from(NUMBER_FIELDS), value=st.sampled_from(["NaN", "Infinity", "-Infinity"]))
def test_a_number_that_is_not_finite_is_refused_as_not_finite(field, value):
    from pydantic import ValidationError

    model, name = field
    required = {k: f'"{v}"' for k, v in REQUIRED.items() if k in model.model_fields and k != name}
    body = "{" + ", ".join(f'"{k}": {v}' for k, v in {**required, name: value}.items()) + "}"
    with pytest.raises(ValidationError) as err:
        model.model_validate_json(body)
    [error] = err.value.errors()
    assert error["loc"] == (name,) and error["type"] == "finite_number", error


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.sampled_from(["NaN", "Infinity", "-Infinity"]))
def test_a_learning_rate_of_nan_is_named_as_not_finite_by_the_inspector(client, value):
    response = client.post(
        "/api/runs/generator/step",
        content=f'{{"text": "Before we", "lr": {value}}}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["error"] == "lr: Input should be a finite number"

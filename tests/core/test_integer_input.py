"""An integer in a request is a whole number or a 400 naming its field: 1.5 is not taken as 1, and 1e400
(which JSON readers read as infinity) is not an OverflowError 500. Every writable integer field of every
input serializer is checked, then the endpoints the issue named (issue 28, item 7)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.urls import get_resolver
from django.utils import timezone
from rest_framework import serializers

from core.api.serializers import IdRelatedField
from freeze.models import FreezeException
from incidents.models import Incident
from program.models import Gate
from tests.freeze.factories import exception_payload, freeze_setup
from tests.incidents.factories import file_incident, incidents_setup
from tests.program.factories import make_program, metrics_for_template

APPS = {"core", "metrics", "program", "freeze", "incidents", "work"}
NOT_WHOLE = [1.5, -0.5, float("inf"), float("-inf"), float("nan"), True, "1.5", "1e400", "one", [1], {}]
MSG = "A valid integer is required."


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def input_serializers() -> list[type[serializers.Serializer[Any]]]:
    """Every serializer of the project's own code that reads a request (outputs are named *Output)."""
    assert get_resolver().url_patterns  # imports every view module, so every serializer class exists
    found = {
        cls
        for cls in _subclasses(serializers.Serializer)
        if cls.__module__.split(".")[0] in APPS and not cls.__name__.endswith("Output")
    }
    return sorted(found, key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def writable_fields(
    fields: Any, prefix: str = ""
) -> Iterator[tuple[str, serializers.Field[Any, Any, Any, Any]]]:
    for name, field in fields.items():
        yield from _leaves(field, f"{prefix}{name}")


def _leaves(field: Any, name: str) -> Iterator[tuple[str, Any]]:
    if field.read_only:
        return
    if isinstance(field, serializers.Serializer):
        yield from writable_fields(field.fields, f"{name}.")
    elif isinstance(field, serializers.ListSerializer | serializers.ListField | serializers.DictField):
        yield from _leaves(field.child, f"{name}.*")
    else:
        yield name, field


def integer_fields() -> list[tuple[str, Any]]:
    return [
        (f"{cls.__qualname__}.{name}", field)
        for cls in input_serializers()
        for name, field in writable_fields(cls().fields)
        if isinstance(field, serializers.IntegerField | serializers.PrimaryKeyRelatedField)
    ]


def test_the_walk_finds_the_integer_fields_the_issue_named():
    names = {name for name, _ in integer_fields()}
    assert {"ExceptionInput.window", "GateCreateInput.phase", "IncidentInput.done_steps.*"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "field"), integer_fields(), ids=[name for name, _ in integer_fields()])
def test_every_integer_input_refuses_what_is_not_a_whole_number(name, field):
    # A row looked up by id goes through IdRelatedField: DRF's own takes 1.5 as row 1.
    assert not isinstance(field, serializers.PrimaryKeyRelatedField) or isinstance(field, IdRelatedField)
    for value in NOT_WHOLE:
        with pytest.raises(serializers.ValidationError) as refused:
            field.run_validation(value)
        assert refused.value.detail == [MSG], (name, value)


def test_a_whole_number_is_still_an_integer():
    field = serializers.IntegerField()
    assert [field.run_validation(value) for value in (7, 7.0, "7")] == [7, 7, 7]


def post_raw(client, url: str, body: dict[str, Any], field: str, literal: str):
    """`body` with `field` written as the JSON number `literal` (1e400 has no Python float to dump)."""
    text = json.dumps({**body, field: "PLACEHOLDER"}).replace('"PLACEHOLDER"', literal)
    return client.post(url, text, content_type="application/json")


def assert_refused_naming(response, field: str) -> None:
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [{"field": field, "message": MSG}]


@pytest.mark.django_db
@pytest.mark.parametrize("literal", ["1e400", "-1e400", "{pk}.5", "{pk}.000001", "true"])
def test_an_exception_window_that_is_not_a_whole_id_is_a_400(as_user, engineer, lead, literal):
    window = freeze_setup(lead)["window"]
    response = post_raw(
        as_user(engineer),
        "/api/v1/freeze-exceptions/",
        exception_payload(),
        "window",
        literal.format(pk=window.pk),
    )
    assert_refused_naming(response, "window")
    assert not FreezeException.objects.exists()


@pytest.mark.django_db
def test_an_exception_window_given_as_a_whole_float_is_that_window(as_user, engineer, lead):
    window = freeze_setup(lead)["window"]
    response = post_raw(
        as_user(engineer), "/api/v1/freeze-exceptions/", exception_payload(), "window", f"{window.pk}.0"
    )
    assert response.status_code == 201, response.content
    assert response.json()["window"] == window.pk


@pytest.mark.django_db
def test_an_exception_list_filtered_by_a_window_that_is_not_a_whole_id_is_a_400(as_user, engineer, lead):
    window = freeze_setup(lead)["window"]
    for value in ("1e400", f"{window.pk}.5"):
        response = as_user(engineer).get("/api/v1/freeze-exceptions/", {"window": value})
        assert_refused_naming(response, "window")


@pytest.mark.django_db
@pytest.mark.parametrize("literal", ["1e400", "{pk}.5"])
def test_a_gate_phase_that_is_not_a_whole_id_is_a_400(as_user, lead, literal):
    metrics_for_template()
    phase = make_program(lead).phases.order_by("order").first()
    gates_before = Gate.objects.count()
    body = {"name": "Extra gate", "kind": "milestone", "due_date": "2026-03-01"}
    response = post_raw(as_user(lead), "/api/v1/gates/", body, "phase", literal.format(pk=phase.pk))
    assert_refused_naming(response, "phase")
    assert Gate.objects.count() == gates_before


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "literal"), [("recurrence_of", "{pk}.5"), ("done_steps", "[1e400]")])
def test_an_incident_integer_that_is_not_whole_is_a_400(as_user, engineer, field, literal):
    refs = incidents_setup()
    earlier = file_incident(engineer, refs)
    opened = timezone.now() - timedelta(days=1)
    body = {
        "title": "All-reduce hangs again",
        "system": "rebuilt",
        "component": "nccl",
        "bug_class": "communication-hang",  # the earlier one's: a valid recurrence but for the id
        "severity": "sev1",
        "opened_at": opened.isoformat(),
        "detected_at": (opened + timedelta(minutes=30)).isoformat(),
    }
    response = post_raw(as_user(engineer), "/api/v1/incidents/", body, field, literal.format(pk=earlier.pk))
    assert response.status_code == 400, response.content
    assert [error["field"] for error in response.json()["errors"]] in ([field], [f"{field}.0"])
    assert list(Incident.objects.all()) == [earlier]


@pytest.mark.django_db
def test_an_incident_recurring_a_whole_id_is_filed(as_user, engineer):
    refs = incidents_setup()
    earlier = file_incident(engineer, refs)
    opened = timezone.now() - timedelta(days=1)
    body = {
        "title": "All-reduce hangs again",
        "system": "rebuilt",
        "component": "nccl",
        "bug_class": "communication-hang",
        "severity": "sev1",
        "opened_at": opened.isoformat(),
        "detected_at": (opened + timedelta(minutes=30)).isoformat(),
        "recurrence_of": earlier.pk,
    }
    response = as_user(engineer).post("/api/v1/incidents/", body, format="json")
    assert response.status_code == 201, response.content

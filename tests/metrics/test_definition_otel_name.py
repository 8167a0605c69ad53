"""A definition's otel_name: the OpenTelemetry metric name the OTLP receiver maps to it."""

from __future__ import annotations

import pytest

from metrics.models import MetricDefinition
from tests.metrics.factories import definition, definition_body

URL = "/api/v1/definitions/"


@pytest.fixture
def owner(as_user, metric_owner):
    return as_user(metric_owner)


def test_otel_name_is_set_on_registration_and_shown(owner, db):
    response = owner.post(
        URL, definition_body(otel_name="gen_ai.server.time_per_output_token"), format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["otel_name"] == "gen_ai.server.time_per_output_token"
    assert MetricDefinition.objects.get(key="probe").otel_metric_name == "gen_ai.server.time_per_output_token"


def test_blank_otel_name_means_the_key(owner, db):
    response = owner.post(URL, definition_body(), format="json")
    assert response.json()["otel_name"] == ""
    assert MetricDefinition.objects.get(key="probe").otel_metric_name == "probe"


@pytest.mark.parametrize("name", ["1starts-with-a-digit", "has space", "x" * 256])
def test_a_name_opentelemetry_would_refuse_is_a_400_on_the_field(owner, db, name):
    response = owner.post(URL, definition_body(otel_name=name), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "otel_name"


def test_two_metrics_cannot_answer_to_the_same_name(owner, db):
    definition(key="latency", otel_name="http.server.duration")
    taken = owner.post(URL, definition_body(otel_name="http.server.duration"), format="json")
    assert taken.status_code == 400
    assert "already maps to latency@1" in taken.json()["detail"]
    definition(key="step", otel_name="probe", start_event="x", end_event="y")
    key_taken = owner.post(URL, definition_body(), format="json")  # key 'probe' is step's OTel name
    assert key_taken.status_code == 400
    assert key_taken.json()["errors"][0]["field"] == "key"
    assert not MetricDefinition.objects.filter(key="probe").exists()


def test_otel_name_stays_editable_on_an_active_version(owner, db):
    definition(key="latency")
    response = owner.patch(f"{URL}latency/versions/1/", {"otel_name": "rpc.server.duration"}, format="json")
    assert response.status_code == 200, response.json()
    assert MetricDefinition.objects.get(key="latency").otel_name == "rpc.server.duration"


def test_the_register_page_takes_an_otel_name(client, metric_owner, db):
    client.force_login(metric_owner)
    assert 'name="otel_name"' in client.get("/metrics/new/").content.decode()
    fields = {**definition_body(otel_name="probe.duration"), "statistic": "mean"}
    response = client.post("/metrics/new/", fields, follow=True)
    assert response.redirect_chain[-1][0] == "/metrics/probe@1/"
    assert MetricDefinition.objects.get(key="probe").otel_name == "probe.duration"


def test_renaming_onto_a_taken_name_is_refused(owner, db):
    definition(key="latency", otel_name="http.server.duration")
    definition(key="step", start_event="x", end_event="y")
    response = owner.patch(f"{URL}step/versions/1/", {"otel_name": "http.server.duration"}, format="json")
    assert response.status_code == 400
    assert MetricDefinition.objects.get(key="step").otel_name == ""

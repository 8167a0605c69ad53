"""One reading of a metric reference (`key`, `key@N`): metrics.refs, and what an unknown one answers.

Named in a request's input (a body field or query parameter) it is a 400 naming the field; named in
the URL path it is a 404."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from core.errors import ApplicationError
from metrics.api.fields import MetricRefField
from metrics.ingest import observations_ingest_rows
from metrics.ingest.check import Lookups
from metrics.models import Observation
from metrics.refs import MetricRefError, metric_ref_parse
from metrics.selectors import definition_resolve
from tests.metrics.factories import definition, row


@pytest.mark.parametrize(
    ("ref", "parsed"),
    [("latency", ("latency", None)), ("latency@2", ("latency", 2)), ("latency@02", ("latency", 2))],
)
def test_parse_reads_key_and_version(ref, parsed):
    assert metric_ref_parse(ref) == parsed


@pytest.mark.parametrize("ref", ["latency@", "latency@x", "latency@-1", "latency@²", "@2", "latency@1@2"])
def test_parse_refuses_a_bad_reference_saying_why(ref):
    with pytest.raises(MetricRefError) as caught:
        metric_ref_parse(ref)
    assert caught.value.message.startswith(f"'{ref}': ")


def test_resolve_says_400_for_input_and_404_for_a_path(ref):
    with pytest.raises(ApplicationError) as as_input:
        definition_resolve("nope", field="criteria.0.metric")
    with pytest.raises(ApplicationError) as in_path:
        definition_resolve("nope@1", field="key", in_path=True)
    assert (as_input.value.status, as_input.value.errors[0]["field"]) == (400, "criteria.0.metric")
    assert (in_path.value.status, in_path.value.errors[0]["field"]) == (404, "key")
    assert definition_resolve("latency@1", in_path=True) == ref["latency"]


def test_ingest_and_registry_refuse_a_bad_version_with_the_same_words(ref):
    with pytest.raises(ApplicationError) as registry:
        definition_resolve("latency@x")
    assert Lookups().definition("latency@x") == registry.value.message


class Body(serializers.Serializer):
    metric = MetricRefField()
    other = MetricRefField(required=False, require_active=True)


def test_field_resolves_to_the_definition(ref):
    draft = definition(key="latency", version=2, status="draft")
    body = Body(data={"metric": "latency", "other": "latency@1"})
    assert body.is_valid(), body.errors
    assert body.validated_data == {"metric": ref["latency"], "other": ref["latency"]}
    assert Body({"metric": draft}).data == {"metric": "latency@2"}


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"metric": "nope"}, "metric", "Unknown metric 'nope'."),
        ({"metric": "latency@x"}, "metric", "must be a number"),
        ({"metric": "latency", "other": "latency@2"}, "other", "latency@2 is draft."),
        ({"metric": "lat\x00ency"}, "metric", "Null characters are not allowed."),
    ],
)
def test_field_names_itself_when_the_reference_is_bad(ref, data, field, words):
    definition(key="latency", version=2, status="draft")
    body = Body(data=data)
    assert not body.is_valid()
    assert list(body.errors) == [field]
    assert words in str(body.errors[field][0])


@pytest.mark.parametrize("name", ["system", "workload"])
def test_observation_filters_refuse_an_unknown_reference_naming_it(as_user, viewer, ingest_user, ref, name):
    observations_ingest_rows(rows=[row(0)], actor=ingest_user)
    batch = Observation.objects.get().batch_id
    # With another filter beside it (`batch`), the unknown reference is still refused by name.
    response = as_user(viewer).get("/api/v1/observations/", {name: "nope", "batch": batch})
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [{"field": name, "message": f"Unknown {name} 'nope'."}]


@pytest.mark.parametrize(
    ("url", "noun"), [("/api/v1/definitions/", "metric"), ("/api/v1/systems/", "system")]
)
def test_list_filters_by_key_refuse_an_unknown_key_naming_it(as_user, viewer, ref, url, noun):
    client = as_user(viewer)
    assert client.get(url, {"key": "latency" if noun == "metric" else "legacy"}).json()["results"]
    response = client.get(url, {"key": "nope"})
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [{"field": "key", "message": f"Unknown {noun} 'nope'."}]

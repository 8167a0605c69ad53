"""The incident metrics are registered through the registry's service on first use: active at once,
audited like any registration, and registered once however often the first use comes."""

from __future__ import annotations

import pytest

from core.errors import ApplicationError
from core.models import Transition
from incidents.vocabulary import METRICS, incident_metrics_ensure
from metrics.models import MetricDefinition
from metrics.services.ensure import definition_ensure_registered

KEYS = sorted(spec["key"] for spec in METRICS)


def _history(key: str) -> list[tuple[str, str]]:
    definition = MetricDefinition.objects.get(key=key)
    rows = Transition.objects.filter(
        content_type__model="metricdefinition", object_id=definition.pk
    ).order_by("pk")
    return [(row.action, row.to_state) for row in rows]


@pytest.mark.django_db
def test_first_use_registers_each_metric_active_and_audited_once():
    incident_metrics_ensure()
    incident_metrics_ensure()
    found = MetricDefinition.objects.filter(key__in=KEYS).order_by("key")
    assert [(d.key, d.version, d.status, d.owner_team) for d in found] == [
        (key, 1, "active", "framework-engineers") for key in KEYS
    ]
    for key in KEYS:
        assert _history(key) == [("registered", "draft"), ("activated", "active")]


@pytest.mark.django_db
def test_an_existing_key_is_returned_unchanged():
    incident_metrics_ensure()
    before = MetricDefinition.objects.get(key="mttr")
    spec = next(spec for spec in METRICS if spec["key"] == "mttr")
    again = definition_ensure_registered(data={**spec, "name": "Something else"}, reason="again")
    assert (again.pk, again.name) == (before.pk, before.name)
    assert _history("mttr") == [("registered", "draft"), ("activated", "active")]


@pytest.mark.django_db
def test_the_registry_checks_apply():
    spec = {**METRICS[0], "key": "bad-unit", "unit": "blorps", "owner_team": "x"}
    with pytest.raises(ApplicationError) as refused:
        definition_ensure_registered(data=spec, reason="test")
    assert (refused.value.status, refused.value.errors[0]["field"]) == (400, "unit")
    assert not MetricDefinition.objects.filter(key="bad-unit").exists()

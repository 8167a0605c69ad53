"""definitions_ensure_registered: an app's own metrics, registered active by the app on first use."""

from __future__ import annotations

import pytest

from core.errors import ApplicationError
from core.models import Transition
from metrics.models import MetricDefinition
from metrics.services import definitions_ensure_registered
from tests.metrics.factories import definition

SPEC = {
    "key": "time-to-fix",
    "name": "Time to fix",
    "unit": "hour",
    "direction": "lower_is_better",
    "statistic": "p50",
    "sampling": "per_run",
    "start_event": "opened",
    "end_event": "resolved",
}


def test_registers_missing_metrics_active_with_an_audit_row(db):
    created = definitions_ensure_registered(specs=[SPEC], owner_team="sre", reason="First use.")
    stored = MetricDefinition.objects.get(key="time-to-fix")
    assert created == [stored]
    assert (stored.version, stored.status, stored.owner_team) == (1, "active", "sre")
    assert stored.activated_at is not None and stored.min_value == 0  # a duration: never negative
    row = Transition.objects.get(object_id=stored.pk, action="registered")
    assert (row.to_state, row.reason, row.actor_id) == ("active", "First use.", None)


def test_leaves_existing_keys_alone_and_is_idempotent(db):
    mine = definition(key="time-to-fix", status="draft", unit="s")
    assert definitions_ensure_registered(specs=[SPEC], owner_team="sre", reason="x") == []
    mine.refresh_from_db()
    assert (mine.status, mine.unit, MetricDefinition.objects.filter(key="time-to-fix").count()) == (
        "draft",
        "s",
        1,
    )


def test_the_registry_rules_still_apply(db):
    bad = {**SPEC, "min_value": 5.0, "max_value": 1.0}
    with pytest.raises(ApplicationError) as caught:
        definitions_ensure_registered(specs=[bad], owner_team="sre", reason="x")
    assert caught.value.errors[0]["field"] == "max_value"
    assert not MetricDefinition.objects.filter(key="time-to-fix").exists()

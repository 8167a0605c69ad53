"""A gate criterion on `mttr` decided by incident data alone: the observations it compares were
written by resolving incidents, none by hand."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from incidents import services as incident_services
from incidents.vocabulary import incident_metrics_ensure
from metrics.models import MetricDefinition, Observation
from program import services
from program.models import Criterion, CriterionResult, Gate
from tests.incidents.factories import file_incident, incidents_setup
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def gate(db, lead):
    metrics_for_template()
    incident_metrics_ensure()  # what the first resolved incident would do
    program = make_program(lead)
    gate = Gate.objects.get(phase__program=program, phase__kind="canary", kind="exit")
    criterion = services.criterion_add(
        actor=lead,
        gate=gate,
        name="MTTR on the new system ≤ the old one's",
        kind=Criterion.Kind.RELATIVE,
        metric=MetricDefinition.objects.get(key="mttr", status="active"),
        statistic="p50",
        operator=Criterion.Operator.GTE,
        threshold=1.0,
        min_samples=8,
    )
    return gate, criterion


def resolve_many(engineer, refs, system: str, hours: list[float]) -> None:
    """File incidents and resolve them through the service, `hours` after each opened."""
    now = timezone.now()
    for i, value in enumerate(hours):
        opened = now - timedelta(days=20 - i, hours=value)
        incident = file_incident(engineer, refs, system=system, opened=opened, detected_at=opened)
        incident_services.incident_resolve(
            actor=engineer, incident=incident, resolved_at=opened + timedelta(hours=value)
        )


def outcome(gate, criterion, lead) -> str:
    evaluation = services.gate_evaluate(gate=gate, actor=lead)
    return CriterionResult.objects.get(evaluation=evaluation, criterion=criterion).outcome


SLOW = [8.0, 9.5, 10.0, 11.0, 12.5, 9.0, 10.5, 14.0, 8.5, 11.5]
FAST = [2.0, 3.5, 2.5, 4.0, 3.0, 2.2, 3.8, 2.8, 3.1, 2.6]


def test_new_system_fixing_faster_passes(gate, lead, engineer):
    refs = incidents_setup()
    resolve_many(engineer, refs, "legacy", SLOW)
    resolve_many(engineer, refs, "rebuilt", FAST)
    assert not Observation.objects.exclude(source="incidents").exists()  # incident data only
    assert outcome(*gate, lead) == CriterionResult.Outcome.PASS


def test_new_system_fixing_slower_fails(gate, lead, engineer):
    refs = incidents_setup()
    resolve_many(engineer, refs, "legacy", FAST)
    resolve_many(engineer, refs, "rebuilt", SLOW)
    assert outcome(*gate, lead) == CriterionResult.Outcome.FAIL


def test_too_few_resolved_incidents_is_inconclusive(gate, lead, engineer):
    refs = incidents_setup()
    resolve_many(engineer, refs, "legacy", SLOW[:3])
    resolve_many(engineer, refs, "rebuilt", FAST[:3])
    assert outcome(*gate, lead) == CriterionResult.Outcome.INCONCLUSIVE

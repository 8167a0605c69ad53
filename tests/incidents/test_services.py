"""incident_file / incident_update / incident_resolve: rules, permissions, audit, and the evidence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from core.audit import transitions_for
from core.errors import ApplicationError
from incidents import services
from incidents.models import Incident
from metrics.models import Observation
from tests.incidents.factories import file_incident, incidents_setup


@pytest.fixture
def refs(db):
    return incidents_setup()


def evidence(incident) -> dict[str, float]:
    rows = Observation.objects.filter(run_id=f"incident-{incident.pk}").select_related("definition")
    return {row.definition.key: row.value for row in rows}


def test_filing_copies_the_runbook_and_records_the_audit_row(refs, engineer):
    incident = file_incident(engineer, refs, done_steps=[0])
    assert [step["step"] for step in incident.checklist] == refs["hang"].runbook
    assert [step["done"] for step in incident.checklist][:2] == [True, False]
    assert incident.owner_team == "training-platform"
    assert [t.action for t in transitions_for(incident)] == ["filed"]
    assert evidence(incident) == {}  # not resolved: no evidence yet


def test_a_viewer_may_not_file_and_nothing_is_written(refs, viewer):
    with pytest.raises(PermissionDenied):
        file_incident(viewer, refs)
    assert not Incident.objects.exists()


def test_each_broken_time_rule_is_named(refs, engineer):
    opened = timezone.now() - timedelta(days=2)
    with pytest.raises(ApplicationError) as refused:
        file_incident(
            engineer,
            refs,
            opened=opened,
            detected_at=opened - timedelta(hours=1),
            mitigated_at=opened + timedelta(hours=3),
            resolved_at=opened + timedelta(hours=2),
        )
    assert refused.value.status == 400
    assert refused.value.errors == [
        {"field": "detected_at", "message": "detected_at must not be before opened_at."},
        {"field": "resolved_at", "message": "resolved_at must not be before mitigated_at."},
    ]
    assert not Incident.objects.exists()


def test_resolving_writes_mttr_and_mttd_tagged_with_class_and_severity(refs, engineer):
    opened = timezone.now() - timedelta(days=2)
    incident = file_incident(engineer, refs, opened=opened, workload=refs["workload"])
    services.incident_resolve(actor=engineer, incident=incident, resolved_at=opened + timedelta(hours=7.5))
    assert evidence(incident) == {"mttr": 7.5, "mttd": 1.0}
    row = Observation.objects.get(run_id=f"incident-{incident.pk}", definition__key="mttr")
    assert row.tags == {"bug_class": "communication-hang", "severity": "sev2"}
    assert row.observed_at == opened + timedelta(hours=7.5)
    assert row.workload.key == "llm-70b"
    incident.refresh_from_db()
    assert incident.mitigated_at == incident.resolved_at  # resolving stops the impact too
    assert [t.action for t in transitions_for(incident)] == ["filed", "resolved"]


def test_editing_a_resolved_incident_rewrites_its_evidence(refs, engineer):
    opened = timezone.now() - timedelta(days=2)
    incident = file_incident(engineer, refs, opened=opened, resolved_at=opened + timedelta(hours=5))
    assert evidence(incident) == {"mttr": 5.0, "mttd": 1.0}
    services.incident_update(
        actor=engineer,
        incident=incident,
        changes={
            "resolved_at": opened + timedelta(hours=9),
            "severity": "sev1",
            "bug_class": refs["divergence"],
        },
    )
    assert evidence(incident) == {"mttr": 9.0, "mttd": 1.0}
    tags = list(Observation.objects.filter(run_id=f"incident-{incident.pk}").values_list("tags", flat=True))
    assert tags == [{"bug_class": "numerical-divergence", "severity": "sev1"}] * 2
    assert Observation.objects.filter(run_id=f"incident-{incident.pk}").count() == 2


def test_editing_only_the_notes_leaves_the_evidence_alone(refs, engineer):
    opened = timezone.now() - timedelta(days=2)
    incident = file_incident(engineer, refs, opened=opened, resolved_at=opened + timedelta(hours=5))
    batches = set(
        Observation.objects.filter(run_id=f"incident-{incident.pk}").values_list("batch_id", flat=True)
    )
    services.incident_update(
        actor=engineer, incident=incident, changes={"troubleshooting": "Rolled back NCCL."}
    )
    after = set(
        Observation.objects.filter(run_id=f"incident-{incident.pk}").values_list("batch_id", flat=True)
    )
    assert after == batches


def test_reopening_withdraws_the_evidence(refs, engineer):
    opened = timezone.now() - timedelta(days=2)
    incident = file_incident(engineer, refs, opened=opened, resolved_at=opened + timedelta(hours=5))
    services.incident_update(
        actor=engineer, incident=incident, changes={"resolved_at": None, "mitigated_at": None}
    )
    assert evidence(incident) == {}
    assert transitions_for(incident).last().action == "reopened"


def test_an_update_breaking_the_order_changes_nothing(refs, engineer):
    opened = timezone.now() - timedelta(days=2)
    incident = file_incident(engineer, refs, opened=opened, resolved_at=opened + timedelta(hours=5))
    with pytest.raises(ApplicationError) as refused:
        services.incident_update(
            actor=engineer, incident=incident, changes={"opened_at": opened + timedelta(hours=6)}
        )
    assert [e["field"] for e in refused.value.errors] == ["detected_at"]
    incident.refresh_from_db()
    assert incident.opened_at == opened
    assert evidence(incident) == {"mttr": 5.0, "mttd": 1.0}


def test_a_checklist_step_beyond_the_runbook_is_refused(refs, engineer):
    incident = file_incident(engineer, refs)
    with pytest.raises(ApplicationError) as refused:
        services.incident_update(actor=engineer, incident=incident, changes={"done_steps": [99]})
    assert refused.value.errors[0]["field"] == "done_steps"


def test_the_database_refuses_times_out_of_order(refs, engineer):
    from django.db import IntegrityError, transaction

    incident = file_incident(engineer, refs)
    with pytest.raises(IntegrityError), transaction.atomic():
        Incident.objects.filter(pk=incident.pk).update(detected_at=incident.opened_at - timedelta(hours=1))

"""Exception impact on gates: an exception names gate metrics (API, 400 naming the field for unknown
keys); approving, revoking or expiring it queues a re-evaluation of exactly the undecided gates whose
criteria use those metrics, and each gate's history says why. The gate page lists the approved ones."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import OutboxMessage, Transition
from freeze import services
from freeze.models import FreezeException
from program.models import Evaluation, Gate
from program.services.gate_triggers import REEVALUATION_REQUESTED
from program.tasks import gate_evaluate
from tests.conftest import wait_for
from tests.freeze.factories import exception_payload, freeze_setup, submitted_exception

URL = "/api/v1/freeze-exceptions/"
CANARY_EXIT = "New reaches 80% of old on the canary workloads"  # the only gate on step-time


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def gate(name: str) -> Gate:
    return Gate.objects.get(name=name)


def requests(gate_id: int) -> list[Transition]:
    return list(
        Transition.objects.filter(
            object_id=gate_id, action=REEVALUATION_REQUESTED, content_type__model="gate"
        )
    )


def queued_gate_ids() -> set[int]:
    return {m.args[0] for m in OutboxMessage.objects.filter(task="program.tasks.gate_evaluate")}


def approved_on_step_time(engineer, component_owner, ref) -> FreezeException:
    exception = submitted_exception(
        engineer, ref["trainer"], ref["now"], title="NCCL upgrade", affected_metrics=["step-time"]
    )
    OutboxMessage.objects.all().delete()
    return services.exception_approve(actor=component_owner, exception=exception)


def test_api_sets_and_shows_affected_metrics_and_names_the_field_for_unknown_keys(as_user, engineer, ref):
    client = as_user(engineer)
    bad = client.post(URL, exception_payload(affected_metrics=["step-time", "no-such"]), format="json")
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["field"] == "affected_metrics" and "no-such" in bad.json()["detail"]
    assert not FreezeException.objects.exists()
    made = client.post(URL, exception_payload(affected_metrics=["step-time"]), format="json")
    assert made.status_code == 201 and made.json()["affected_metrics"] == ["step-time"]
    pk = made.json()["id"]
    edited = client.patch(
        f"{URL}{pk}/", {"affected_metrics": ["training-throughput", "step-time"]}, format="json"
    )
    assert edited.status_code == 200
    assert edited.json()["affected_metrics"] == ["step-time", "training-throughput"]
    refused = client.patch(f"{URL}{pk}/", {"affected_metrics": ["nope"]}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "affected_metrics"
    assert client.get(f"{URL}{pk}/").json()["affected_metrics"] == ["step-time", "training-throughput"]


def test_changing_affected_metrics_after_submission_does_not_resubmit(
    as_user, engineer, component_owner, ref
):
    exception = submitted_exception(engineer, ref["trainer"], ref["now"], affected_metrics=["step-time"])
    services.exception_approve(actor=component_owner, exception=exception)
    services.exception_edit(actor=engineer, exception=exception, changes={"affected_metrics": []})
    exception.refresh_from_db()
    assert exception.status == "approved" and not exception.affected_metrics.exists()


def test_approval_reevaluates_only_the_gates_using_its_metrics(engineer, component_owner, ref):
    exception = approved_on_step_time(engineer, component_owner, ref)
    assert exception.status == "approved"
    canary = gate(CANARY_EXIT)
    assert queued_gate_ids() == {canary.pk}
    [record] = requests(canary.pk)
    assert record.reason == f"exception #{exception.pk} 'NCCL upgrade' approved"
    assert record.actor == component_owner
    others = Gate.objects.exclude(pk=canary.pk)
    assert others.count() >= 4  # PoC exit and cutover use throughput, manual milestones none
    assert not Transition.objects.filter(action=REEVALUATION_REQUESTED).exclude(object_id=canary.pk).exists()
    # The queued task evaluates the gate.
    assert gate_evaluate(canary.pk) is not None
    assert Evaluation.objects.filter(gate=canary).exists()
    assert not Evaluation.objects.exclude(gate=canary).exists()


def test_revocation_reevaluates_and_says_so(engineer, component_owner, lead, ref):
    exception = approved_on_step_time(engineer, component_owner, ref)
    OutboxMessage.objects.all().delete()
    services.exception_revoke(actor=lead, exception=exception, reason="NCCL hangs on the canary")
    canary = gate(CANARY_EXIT)
    assert queued_gate_ids() == {canary.pk}
    reasons = [t.reason for t in requests(canary.pk)]
    assert f"exception #{exception.pk} 'NCCL upgrade' revoked" in reasons


def test_expiry_reevaluates_and_says_so(engineer, component_owner, ref):
    exception = approved_on_step_time(engineer, component_owner, ref)
    OutboxMessage.objects.all().delete()
    assert services.exceptions_expire(now=exception.change_ends_at + timedelta(seconds=1)) == [exception.pk]
    canary = gate(CANARY_EXIT)
    assert queued_gate_ids() == {canary.pk}
    expired = [t for t in requests(canary.pk) if t.reason.endswith("expired")]
    assert [t.reason for t in expired] == [f"exception #{exception.pk} 'NCCL upgrade' expired"]
    assert expired[0].actor is None


def test_an_exception_never_approved_or_naming_no_metric_reevaluates_nothing(engineer, component_owner, ref):
    unapproved = submitted_exception(engineer, ref["trainer"], ref["now"], affected_metrics=["step-time"])
    plain = submitted_exception(engineer, ref["trainer"], ref["now"], title="plain")
    services.exception_approve(actor=component_owner, exception=plain)
    services.exceptions_expire(now=unapproved.change_ends_at + timedelta(seconds=1))
    assert not Transition.objects.filter(action=REEVALUATION_REQUESTED).exists()
    assert not queued_gate_ids()


def test_decided_gates_are_not_reevaluated(engineer, component_owner, ref):
    Gate.objects.filter(name=CANARY_EXIT).update(status=Gate.Status.WAIVED)
    approved_on_step_time(engineer, component_owner, ref)
    assert not queued_gate_ids()
    assert not Transition.objects.filter(action=REEVALUATION_REQUESTED).exists()


def test_gate_page_lists_active_exceptions_touching_its_metrics_in_constant_queries(
    client, lead, engineer, component_owner, ref
):
    canary = gate(CANARY_EXIT)
    client.force_login(lead)
    url = f"/programs/gates/{canary.pk}/"

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    empty = client.get(url).content.decode()
    assert "Active exceptions touching this gate" in empty and "None: no approved freeze exception" in empty
    baseline = queries()
    first = approved_on_step_time(engineer, component_owner, ref)
    pending = submitted_exception(
        engineer, ref["trainer"], ref["now"], title="Pending", affected_metrics=["step-time"]
    )
    later = ref["now"] + timedelta(days=2)
    upcoming = submitted_exception(
        engineer,
        ref["trainer"],
        ref["now"],
        title="Kernel flags",
        affected_metrics=["step-time", "training-throughput"],
        change_starts_at=later,
        change_ends_at=later + timedelta(hours=3),
    )
    services.exception_approve(actor=component_owner, exception=upcoming)
    page = client.get(url).content.decode()
    assert f"#{first.pk} NCCL upgrade" in page and f"#{upcoming.pk} Kernel flags" in page
    assert "upcoming" in page and "touches step-time, training-throughput" in page
    assert "Pending" not in page  # submitted, not approved
    assert queries() == baseline
    # The history says why the gate re-evaluated.
    assert f"exception #{first.pk} &#x27;NCCL upgrade&#x27; approved" in page
    assert pending.status == "submitted"


def test_exception_page_shows_the_gate_metrics(client, engineer, ref):
    exception = submitted_exception(engineer, ref["trainer"], ref["now"], affected_metrics=["step-time"])
    client.force_login(engineer)
    page = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    assert 'data-testid="affected-metrics"' in page and "step-time" in page
    assert timezone.now() < exception.change_ends_at


@pytest.mark.services
def test_the_real_worker_reevaluates_the_gate_after_an_approval_commits(
    celery_worker_real, lead, engineer, component_owner
):
    found = freeze_setup(lead)
    exception = submitted_exception(
        engineer, found["trainer"], found["now"], title="NCCL upgrade", affected_metrics=["step-time"]
    )
    canary = gate(CANARY_EXIT)
    assert not Evaluation.objects.filter(gate=canary).exists()
    services.exception_approve(actor=component_owner, exception=exception)
    assert wait_for(lambda: Evaluation.objects.filter(gate=canary).exists())
    assert not Evaluation.objects.exclude(gate=canary).exists()

"""Who may ask for a gate evaluation: the program's leads and metric owners; the system (no actor) always."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from core.models import Notification, Transition
from program import services
from program.models import Evaluation, Gate
from program.policies import MSG_EVALUATE
from tests.program.factories import make_program, metrics_for_template, observe, spread

MSG_MAY_NOT_EVALUATE = MSG_EVALUATE.format(program="rebuild")


@pytest.fixture
def ready_to_pass(db, lead):
    """The canary exit gate with numbers and attestations that make it ready when evaluated."""
    ref = metrics_for_template()
    make_program(lead)
    for system, throughput, step in (("legacy", 100, 800), ("rebuilt", 90, 700)):
        observe(ref["throughput"], ref[system], ref["medium"], spread(throughput))
        observe(ref["step"], ref[system], ref["medium"], spread(step))
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    for criterion in gate.criteria.filter(kind="manual"):
        services.criterion_attest(actor=lead, criterion=criterion, link="https://wiki.example.com/x")
    return gate


def evaluate(client, gate):
    return client.post(f"/api/v1/gates/{gate.pk}/evaluate/")


@pytest.mark.parametrize("role", ["viewer", "engineer", "component_owner", "ingest_user"])
def test_roles_other_than_leads_and_metric_owners_cannot_evaluate(
    request, as_user, ready_to_pass, role, django_capture_on_commit_callbacks
):
    user = request.getfixturevalue(role)
    with django_capture_on_commit_callbacks(execute=True):
        response = evaluate(as_user(user), ready_to_pass)
    assert response.status_code == 403
    assert response.json()["detail"] == MSG_MAY_NOT_EVALUATE
    ready_to_pass.refresh_from_db()
    assert ready_to_pass.status == "open"
    assert not Evaluation.objects.filter(gate=ready_to_pass).exists()
    assert not Transition.objects.filter(action="evaluated").exists()
    assert not Notification.objects.filter(event="gate.ready").exists()


@pytest.mark.parametrize("role", ["lead", "metric_owner"])
def test_leads_and_metric_owners_evaluate_and_the_transition_names_them(
    request, as_user, ready_to_pass, role, django_capture_on_commit_callbacks
):
    user = request.getfixturevalue(role)
    with django_capture_on_commit_callbacks(execute=True):
        response = evaluate(as_user(user), ready_to_pass)
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "ready"
    assert Transition.objects.get(action="evaluated").actor == user
    assert Notification.objects.filter(event="gate.ready").count() == 1


def test_the_service_refuses_a_person_without_the_role_but_not_the_system(ready_to_pass, viewer):
    with pytest.raises(PermissionDenied, match=MSG_MAY_NOT_EVALUATE):
        services.gate_evaluate(gate=ready_to_pass, actor=viewer)
    assert not Evaluation.objects.exists()
    services.gate_evaluate(gate=ready_to_pass)  # periodic task and ingest follow-up: no actor
    assert Gate.objects.get(pk=ready_to_pass.pk).status == "ready"
    assert Transition.objects.get(action="evaluated").actor is None

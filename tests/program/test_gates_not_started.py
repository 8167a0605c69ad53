"""A program that has not started yet has no gate ready for review, whatever evaluates its gates (a
person, an exception's re-evaluation, the periodic sweep); its evidence is still stored. Starting it
queues the evaluation of its gates, which then become ready when their criteria hold."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from core.models import Notification, Transition
from program import services, tasks
from program.models import Evaluation, Gate, Program
from program.services.gate_triggers import REEVALUATION_REQUESTED
from tests.conftest import wait_for
from tests.program.factories import make_program, metrics_for_template, observe, spread

POC_EXIT = "Key hypothesis proven"
POC_MILESTONE = "New framework trains a small job"


def poc_criteria_hold(lead) -> Program:
    """A program starting in three weeks whose PoC gates' criteria all pass: throughput 0.95× legacy
    on the large workload (≥ 0.9 wanted) and the small job's run attested."""
    ref = metrics_for_template()
    program = make_program(lead, slug="later", start=timezone.localdate() + timedelta(days=21))
    observe(ref["throughput"], ref["legacy"], ref["large"], spread(100))
    observe(ref["throughput"], ref["rebuilt"], ref["large"], spread(95))
    [manual] = Gate.objects.get(name=POC_MILESTONE).criteria.all()
    services.criterion_attest(actor=lead, criterion=manual, link="https://wiki.example.com/small-job")
    return program


@pytest.fixture
def later(db, lead) -> Program:
    return poc_criteria_hold(lead)


def poc_gates() -> list[Gate]:
    return list(Gate.objects.filter(phase__kind="poc").order_by("name"))


def statuses() -> dict[str, str]:
    return {gate.name: gate.status for gate in poc_gates()}


def ready_notices() -> int:
    return Notification.objects.filter(event="gate.ready").count()


def test_evaluating_a_gate_of_a_program_not_started_stores_evidence_but_keeps_it_open(
    later, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        evaluations = [services.gate_evaluate(gate=gate) for gate in poc_gates()]
    assert all(e.all_required_pass for e in evaluations)  # the numbers say pass…
    assert statuses() == {POC_EXIT: "open", POC_MILESTONE: "open"}  # …but nobody can decide yet
    assert ready_notices() == 0 and mailoutbox == []
    assert not Transition.objects.filter(action="evaluated").exists()


def test_a_lead_evaluating_through_the_api_gets_an_open_gate(
    as_user, lead, later, django_capture_on_commit_callbacks
):
    gate = Gate.objects.get(name=POC_EXIT)
    with django_capture_on_commit_callbacks(execute=True):
        response = as_user(lead).post(f"/api/v1/gates/{gate.pk}/evaluate/")
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "open"
    assert ready_notices() == 0


def test_an_exception_reevaluation_keeps_the_gates_of_a_program_not_started_open(
    later, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        queued = services.gates_reevaluate_for_metric_keys(
            metric_keys=["training-throughput"], reason="exception #1 'NCCL upgrade' approved"
        )
    assert Gate.objects.get(name=POC_EXIT).pk in queued
    assert Evaluation.objects.filter(gate__name=POC_EXIT, all_required_pass=True).exists()
    assert statuses()[POC_EXIT] == "open"
    assert ready_notices() == 0


def test_the_periodic_sweep_keeps_the_gates_of_a_program_not_started_open(
    later, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.gates_evaluate_open() >= 2
    passing = {e.gate.name for e in Evaluation.objects.filter(all_required_pass=True)}
    assert passing >= {POC_EXIT, POC_MILESTONE}
    assert statuses() == {POC_EXIT: "open", POC_MILESTONE: "open"}
    assert ready_notices() == 0


def test_a_lead_starting_the_program_early_makes_its_first_phase_gates_ready(
    lead, later, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        services.program_advance(actor=lead, program=later, reason="The cluster is ready early")
    assert statuses() == {POC_EXIT: "ready", POC_MILESTONE: "ready"}
    assert ready_notices() == 2
    assert sorted(m.subject for m in mailoutbox) == [
        f"[Rebuild Tracker] Gate '{POC_EXIT}' is ready for review",
        f"[Rebuild Tracker] Gate '{POC_MILESTONE}' is ready for review",
    ]
    # The gate's history says which event asked for the evaluation.
    [record] = Transition.objects.filter(object_id=poc_gates()[0].pk, action=REEVALUATION_REQUESTED)
    assert record.reason == "Rebuild started" and record.actor == lead


def test_the_start_date_coming_makes_its_first_phase_gates_ready(later, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert services.programs_start_due(today=later.start_date) == [later.pk]
    assert statuses() == {POC_EXIT: "ready", POC_MILESTONE: "ready"}
    assert ready_notices() == 2


def test_the_gate_page_says_the_program_has_not_started_instead_of_offering_an_evaluation(
    client, lead, later
):
    client.force_login(lead)
    page = client.get(f"/programs/gates/{Gate.objects.get(name=POC_EXIT).pk}/").content.decode()
    assert "Evaluate now" not in page
    assert f"Rebuild has not started (it starts on {later.start_date:%-d %b %Y})" in page
    services.program_advance(actor=lead, program=later, reason="The cluster is ready early")
    page = client.get(f"/programs/gates/{Gate.objects.get(name=POC_EXIT).pk}/").content.decode()
    assert "Evaluate now" in page and "has not started" not in page


@pytest.mark.services
def test_the_real_worker_evaluates_the_first_phase_gates_once_the_program_starts(celery_worker_real, lead):
    later = poc_criteria_hold(lead)
    gate = Gate.objects.get(name=POC_EXIT)
    for held_back in poc_gates():
        assert services.gate_evaluate(gate=held_back).all_required_pass
    assert statuses() == {POC_EXIT: "open", POC_MILESTONE: "open"}
    services.program_advance(actor=lead, program=later, reason="The cluster is ready early")
    assert wait_for(lambda: statuses() == {POC_EXIT: "ready", POC_MILESTONE: "ready"})
    assert Evaluation.objects.get(gate=gate).all_required_pass
    assert wait_for(lambda: ready_notices() == 2)

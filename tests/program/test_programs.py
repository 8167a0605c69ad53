"""program_create, phase_replan and program_advance through the API."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import IntegrityError, transaction

from core.models import Transition
from program.models import Criterion, Gate, Phase, Program
from tests.program.factories import make_program, metrics_for_template

PAYLOAD = {
    "slug": "rebuild",
    "name": "Rebuild",
    "start_date": "2026-01-01",
    "baseline_system": "legacy",
    "candidate_system": "rebuilt",
}


@pytest.fixture
def ref(db):
    return metrics_for_template()


def test_lead_creates_a_program_from_the_template(as_user, lead, ref):
    response = as_user(lead).post("/api/v1/programs/", PAYLOAD, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert [p["kind"] for p in body["phases"]] == ["poc", "canary", "cutover", "frontier"]
    assert [(p["planned_start"], p["planned_end"]) for p in body["phases"]] == [
        ("2026-01-01", "2026-03-31"),
        ("2026-04-01", "2026-08-31"),
        ("2026-09-01", "2026-12-31"),
        ("2027-01-01", "2027-02-28"),
    ]
    assert [p["status"] for p in body["phases"]] == ["active", "planned", "planned", "planned"]
    assert all(any(g["kind"] == "exit" for g in p["gates"]) for p in body["phases"])
    canary = Criterion.objects.filter(gate__phase__kind="canary", kind="relative")
    assert {c.metric.ref for c in canary} == {"training-throughput@1", "step-time@1"}
    assert set(canary.values_list("threshold", flat=True)) == {0.8}


@pytest.mark.parametrize(
    ("changes", "status", "field"),
    [
        ({"template": "nope"}, 400, "template"),
        ({"candidate_system": "legacy"}, 400, "candidate"),
        ({"baseline_system": "mainframe"}, 400, "baseline_system"),
        ({"candidate_system": "mainframe"}, 400, "candidate_system"),
        ({"candidate_system": "a\x00b"}, 400, "candidate_system"),
        ({"start_date": "yesterday"}, 400, "start_date"),
        ({"slug": "has space"}, 400, "slug"),
        ({"start_date": "9999-12-31"}, 400, "start_date"),
        ({"start_date": "1900-01-01"}, 400, "start_date"),
    ],
)
def test_bad_program_input_is_refused_naming_the_field(as_user, lead, ref, changes, status, field):
    response = as_user(lead).post("/api/v1/programs/", {**PAYLOAD, **changes}, format="json")
    assert response.status_code == status
    assert field in [e["field"] for e in response.json()["errors"]]
    assert not Program.objects.exists()


def test_only_leads_create_programs(as_user, engineer, ref):
    response = as_user(engineer).post("/api/v1/programs/", PAYLOAD, format="json")
    assert response.status_code == 403
    assert not Program.objects.exists()


def test_duplicate_slug_is_409(as_user, lead, ref):
    as_user(lead).post("/api/v1/programs/", PAYLOAD, format="json")
    response = as_user(lead).post("/api/v1/programs/", PAYLOAD, format="json")
    assert response.status_code == 409


def test_a_missing_suggested_metric_leaves_its_slot_unbound(as_user, lead, ref):
    ref["scaling"].delete()
    response = as_user(lead).post("/api/v1/programs/", PAYLOAD, format="json")
    assert response.status_code == 201, response.json()
    scaling = Criterion.objects.get(slot="scaling_efficiency")
    assert scaling.metric is None and scaling.workload.key == "llm-pretrain-70b"
    assert {c.metric.key for c in Criterion.objects.filter(slot="throughput")} == {"training-throughput"}


def test_advance_needs_the_exit_gate_passed_or_waived(as_user, lead, ref):
    program = make_program(lead)
    client = as_user(lead)
    refused = client.post(f"/api/v1/programs/{program.slug}/advance/", {}, format="json")
    assert refused.status_code == 409
    assert "Key hypothesis proven" in refused.json()["detail"]
    exit_gate = Gate.objects.get(phase__kind="poc", kind="exit")
    Gate.objects.filter(pk=exit_gate.pk).update(status="waived")
    advanced = client.post(f"/api/v1/programs/{program.slug}/advance/", {"reason": "waived"}, format="json")
    assert advanced.status_code == 200
    statuses = {p["kind"]: p["status"] for p in advanced.json()["phases"]}
    assert statuses == {"poc": "completed", "canary": "active", "cutover": "planned", "frontier": "planned"}
    assert Transition.objects.filter(action="completed", to_state="completed").count() == 1


def test_advancing_past_the_last_phase_completes_the_program(lead, ref):
    from program.services import program_advance

    program = make_program(lead)
    Gate.objects.filter(kind="exit").update(status="passed")
    for _ in range(4):
        program_advance(actor=lead, program=program, reason="on the data")
    program.refresh_from_db()
    assert program.status == "completed"
    assert not Phase.objects.filter(status="active").exists()


def test_only_leads_advance(as_user, engineer, lead, ref):
    program = make_program(lead)
    Gate.objects.filter(kind="exit").update(status="passed")
    assert as_user(engineer).post(f"/api/v1/programs/{program.slug}/advance/").status_code == 403
    assert Phase.objects.get(kind="poc").status == "active"


def test_the_database_allows_one_active_phase(lead, ref):
    make_program(lead)
    with pytest.raises(IntegrityError), transaction.atomic():
        Phase.objects.filter(kind="canary").update(status="active")


def test_replan_keeps_history_and_moves_the_exit_gate(as_user, lead, ref):
    make_program(lead)
    phase = Phase.objects.get(kind="cutover")
    response = as_user(lead).post(
        f"/api/v1/phases/{phase.pk}/replan/",
        {
            "planned_start": "2026-09-15",
            "planned_end": "2027-01-15",
            "reason": "Hardware delivery slipped",
            "confirm_overlap_or_gap": True,
        },
        format="json",
    )
    assert response.status_code == 200
    assert Gate.objects.get(phase=phase, kind="exit").due_date == date(2027, 1, 15)
    record = Transition.objects.get(action="replanned")
    assert record.data["before"] == {"planned_start": "2026-09-01", "planned_end": "2026-12-31"}
    assert record.reason == "Hardware delivery slipped"
    assert phase.events.count() >= 2  # pghistory keeps every version of the row


def test_replan_refuses_dates_no_calendar_plan_has(as_user, lead, ref):
    make_program(lead)
    phase = Phase.objects.get(kind="canary")
    response = as_user(lead).post(
        f"/api/v1/phases/{phase.pk}/replan/",
        {"planned_start": "2026-09-01", "planned_end": "9999-12-31", "reason": "typo"},
        format="json",
    )
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "planned_end"


def test_replan_refuses_reversed_dates_and_missing_reason(as_user, lead, ref):
    make_program(lead)
    phase = Phase.objects.get(kind="cutover")
    reversed_dates = as_user(lead).post(
        f"/api/v1/phases/{phase.pk}/replan/",
        {"planned_start": "2026-10-01", "planned_end": "2026-09-01", "reason": "x"},
        format="json",
    )
    assert reversed_dates.status_code == 400
    assert reversed_dates.json()["errors"][0]["field"] == "planned_end"
    no_reason = as_user(lead).post(
        f"/api/v1/phases/{phase.pk}/replan/",
        {"planned_start": "2026-09-01", "planned_end": "2026-12-01", "reason": ""},
        format="json",
    )
    assert no_reason.status_code == 400


def test_lead_creates_a_program_on_the_page(client, lead, ref):
    client.force_login(lead)
    assert client.get("/programs/new/").status_code == 200
    response = client.post(
        "/programs/new/",
        {
            "slug": "next",
            "name": "Next",
            "start_date": "2027-01-01",
            "baseline": "legacy",
            "candidate": "rebuilt",
            "template": "rebuild-14m",
        },
    )
    assert response.status_code == 302
    assert Program.objects.get(slug="next").phases.count() == 4


def test_program_page_form_shows_refusals(client, engineer, ref):
    client.force_login(engineer)
    response = client.post(
        "/programs/new/",
        {
            "slug": "next",
            "name": "Next",
            "start_date": "2027-01-01",
            "baseline": "legacy",
            "candidate": "rebuilt",
            "template": "rebuild-14m",
        },
    )
    assert response.status_code == 403  # the styled 403 page, before the form is read
    assert (
        "Only a program creator (group program-leads) or a platform admin may create programs."
        in response.content.decode()
    )
    assert not Program.objects.exists()

"""Deliberate phase moves: the reason rule around the planned end, actual dates, backfilling them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Transition
from program.models import Gate, Phase
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def program(db, lead):
    metrics_for_template()
    return make_program(lead)


def _poc_ends(days_from_today: int) -> Phase:
    """The active PoC, planned to end `days_from_today` from today, its exit gate passed."""
    poc = Phase.objects.get(kind="poc")
    end = timezone.localdate() + timedelta(days=days_from_today)
    Phase.objects.filter(pk=poc.pk).update(planned_start=end - timedelta(days=90), planned_end=end)
    Gate.objects.filter(phase=poc, kind="exit").update(status="passed")
    return poc


def advance(client, program, **body):
    return client.post(f"/api/v1/programs/{program.slug}/advance/", body, format="json")


@pytest.mark.parametrize(
    ("planned_end_in", "needs_reason"),
    [(0, False), (7, False), (-7, False), (8, True), (-8, True), (49, True)],
    ids=["on the day", "7 days early", "7 days late", "8 days early", "8 days late", "7 weeks early"],
)
def test_a_reason_is_needed_beyond_seven_days_off_plan(as_user, lead, program, planned_end_in, needs_reason):
    _poc_ends(planned_end_in)
    response = advance(as_user(lead), program)
    if needs_reason:
        assert response.status_code == 400, response.json()
        assert response.json()["errors"][0]["field"] == "reason"
        assert f"{abs(planned_end_in)} days" in response.json()["detail"]
        assert Phase.objects.get(kind="poc").status == "active"  # nothing half-written
        assert advance(as_user(lead), program, reason="Hypothesis proven early").status_code == 200
    else:
        assert response.status_code == 200, response.json()
    assert Phase.objects.get(kind="canary").status == "active"


def test_advancing_records_actual_dates_and_the_reason(as_user, lead, program):
    _poc_ends(30)
    advance(as_user(lead), program, reason="Hypothesis proven a month early")
    today = timezone.localdate()
    poc, canary = Phase.objects.get(kind="poc"), Phase.objects.get(kind="canary")
    assert (poc.actual_end, canary.actual_start) == (today, today)
    record = Transition.objects.get(action="completed", object_id=poc.pk)
    assert record.reason == "Hypothesis proven a month early"
    assert record.data["next_phase"] == "Canary"
    assert record.data["exit_gate"]["status"] == "passed"
    assert record.data["days_off_plan"] == -30


def backfill(client, phase, **body):
    return client.post(f"/api/v1/phases/{phase.pk}/actual-dates/", body, format="json")


def _advanced_once(client, program) -> tuple[Phase, Phase]:
    _poc_ends(0)
    assert advance(client, program).status_code == 200
    return Phase.objects.get(kind="poc"), Phase.objects.get(kind="canary")


def test_lead_backfills_actual_dates_with_a_reason(as_user, lead, program):
    client = as_user(lead)
    poc, canary = _advanced_once(client, program)
    today = timezone.localdate()
    earlier = today - timedelta(days=10)
    moved = backfill(client, poc, actual_end=earlier.isoformat(), reason="Closed the PoC in the review")
    assert moved.status_code == 200, moved.json()
    assert moved.json()["actual_end"] == earlier.isoformat()
    started = backfill(client, canary, actual_start=earlier.isoformat(), reason="Canary began that day")
    assert started.status_code == 200, started.json()
    record = Transition.objects.filter(action="dates_backfilled").order_by("id").first()
    assert record.reason == "Closed the PoC in the review"
    assert record.data["before"]["actual_end"] == today.isoformat()
    assert record.data["after"]["actual_end"] == earlier.isoformat()


@pytest.mark.parametrize(
    ("which", "body", "field"),
    [
        ("poc", {"actual_end": "FUTURE"}, "actual_end"),
        ("poc", {"actual_start": "FUTURE"}, "actual_start"),
        ("poc", {"actual_start": "TODAY", "actual_end": "YESTERDAY"}, "actual_end"),
        ("poc", {"actual_end": None}, "actual_end"),  # a completed phase keeps an end
        ("canary", {"actual_end": "TODAY"}, "actual_end"),  # an active phase has none yet
        ("canary", {"actual_start": "LONG_AGO"}, "actual_start"),  # before the PoC ended
        ("poc", {"actual_start": "BEFORE_PROGRAM"}, "actual_start"),
        ("poc", {"actual_end": "TOMORROW_OF_CANARY"}, "actual_end"),  # after the canary started
        ("poc", {"actual_end": "YESTERDAY", "reason": " "}, "reason"),
    ],
)
def test_backfill_refuses_bad_dates_naming_the_field(as_user, lead, program, which, body, field):
    client = as_user(lead)
    poc, canary = _advanced_once(client, program)
    today = timezone.localdate()
    # Give the canary a start before today so "after the canary started" is a past date.
    Phase.objects.filter(pk=canary.pk).update(actual_start=today - timedelta(days=5))
    Phase.objects.filter(pk=poc.pk).update(actual_end=today - timedelta(days=5))
    days = {
        "FUTURE": today + timedelta(days=1),
        "TODAY": today,
        "YESTERDAY": today - timedelta(days=1),
        "LONG_AGO": today - timedelta(days=400),
        "TOMORROW_OF_CANARY": today - timedelta(days=4),
        "BEFORE_PROGRAM": program.start_date - timedelta(days=1),
    }
    payload = {"reason": "correcting"}
    for key, value in body.items():
        payload[key] = days[value].isoformat() if value in days else value
    response = backfill(client, poc if which == "poc" else canary, **payload)
    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["field"] == field
    assert not Transition.objects.filter(action="dates_backfilled").exists()


def test_a_planned_phase_has_no_actual_dates_to_backfill(as_user, lead, program):
    cutover = Phase.objects.get(kind="cutover")
    response = backfill(as_user(lead), cutover, actual_start="2026-01-01", reason="x")
    assert response.status_code == 409
    assert "planned" in response.json()["detail"]


def test_only_leads_backfill(as_user, engineer, program):
    poc = Phase.objects.get(kind="poc")
    assert backfill(as_user(engineer), poc, actual_start="2026-01-01", reason="x").status_code == 403

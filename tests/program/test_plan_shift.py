"""A plan that follows what happened (issue 26, item 5): advancing off plan offers to shift the rest of
the plan; re-planning out of step with a neighbour is refused unless confirmed."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.utils import timezone

from core.models import Transition
from freeze.models import FreezeWindow
from program.models import Gate, Phase, Program
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def program(db, lead, django_capture_on_commit_callbacks):
    """In PoC since 60 days ago (its exit gate passed): canary is planned to start about a month ahead."""
    metrics_for_template()
    with django_capture_on_commit_callbacks(execute=True):
        program = make_program(lead, start=timezone.localdate() - timedelta(days=60))
    Gate.objects.filter(phase__kind="poc", kind="exit").update(status="passed")
    return program


def advance(client, program, **body):
    return client.post(f"/api/v1/programs/{program.slug}/advance/", body, format="json")


def _plan() -> dict[str, tuple[date, date]]:
    return {p.kind: (p.planned_start, p.planned_end) for p in Phase.objects.order_by("order")}


def _dues() -> dict[int, date]:
    return dict(Gate.objects.values_list("pk", "due_date"))


def test_the_preview_lists_what_a_shift_moves_from_and_to(as_user, lead, program):
    canary = Phase.objects.get(kind="canary")
    slip = (timezone.localdate() - canary.planned_start).days
    assert slip < -20
    body = as_user(lead).get(f"/api/v1/programs/{program.slug}/advance/").json()
    poc = Phase.objects.get(kind="poc")
    assert body["completes"]["name"] == poc.name and body["starts"]["name"] == "Canary"
    assert body["shift"]["days"] == slip
    moves = {(m["subject"], m["name"], m["field"]): (m["from"], m["to"]) for m in body["shift"]["moves"]}
    assert moves[("phase", "Canary", "planned_start")] == (
        canary.planned_start.isoformat(),
        timezone.localdate().isoformat(),
    )
    frontier = Phase.objects.get(kind="frontier")
    assert moves[("phase", "Frontier sprint", "planned_end")] == (
        frontier.planned_end.isoformat(),
        (frontier.planned_end + timedelta(days=slip)).isoformat(),
    )
    assert not any(name == poc.name for _, name, _ in moves)  # the phase that completes keeps its plan
    later_gates = Gate.objects.exclude(phase__kind="poc").count()
    assert sum(1 for subject, _, _ in moves if subject == "gate") == later_gates
    [first_day, last_day] = body["shift"]["followers"]
    assert (first_day["subject"], first_day["field"]) == ("freeze window", "first_day")
    assert first_day["to"] == (frontier.planned_start + timedelta(days=slip)).isoformat()
    assert last_day["to"] == (frontier.planned_end + timedelta(days=slip)).isoformat()
    # The preview writes nothing, and advancing without the shift leaves the later plan as it was.
    plan, dues = _plan(), _dues()
    assert advance(as_user(lead), program, reason="Early").status_code == 200
    assert _plan() == plan and _dues() == dues
    assert not Transition.objects.filter(action="plan_shifted").exists()


def test_advancing_early_with_the_shift_moves_every_later_phase_gate_and_the_frontier_window(
    as_user, lead, program, django_capture_on_commit_callbacks
):
    today = timezone.localdate()
    plan, dues = _plan(), _dues()
    slip = timedelta(days=(today - plan["canary"][0]).days)
    with django_capture_on_commit_callbacks(execute=True):
        response = advance(as_user(lead), program, reason="Hypothesis proven a month early", shift_plan=True)
    assert response.status_code == 200, response.json()
    after = _plan()
    assert after["poc"] == plan["poc"]
    for kind in ("canary", "cutover", "frontier"):
        assert after[kind] == (plan[kind][0] + slip, plan[kind][1] + slip)
    for gate in Gate.objects.select_related("phase"):
        expected = dues[gate.pk] if gate.phase.kind == "poc" else dues[gate.pk] + slip
        assert gate.due_date == expected, gate.name
    window = FreezeWindow.objects.get(program=program, phase__kind="frontier")
    assert window.starts_at.date() == after["frontier"][0]
    assert window.ends_at.date() == after["frontier"][1] + timedelta(days=1)
    record = Transition.objects.get(action="plan_shifted")
    assert record.reason == "Hypothesis proven a month early"
    assert record.data["days"] == slip.days and record.data["starts"] == "Canary"
    assert {"subject": "phase", "field": "planned_start", "name": "Canary"}.items() <= record.data["moves"][
        0
    ].items()


def test_a_shift_needs_a_reason_and_nothing_is_half_written(as_user, lead, program):
    Phase.objects.filter(kind="poc").update(planned_end=timezone.localdate())  # on plan: no reason needed
    Phase.objects.filter(kind="canary").update(planned_start=timezone.localdate() + timedelta(days=3))
    plan = _plan()
    response = advance(as_user(lead), program, shift_plan=True)
    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["field"] == "reason"
    assert _plan() == plan
    assert Phase.objects.get(kind="poc").status == "active"


def test_the_advance_page_previews_the_shift_and_applies_it_with_the_reason(client, lead, program):
    client.force_login(lead)
    canary = Phase.objects.get(kind="canary")
    html = client.get(f"/programs/{program.slug}/advance/").content.decode()
    assert "Shift the later plan?" in html
    assert f"{canary.planned_start:%-d %b %Y}</td><td>→ {timezone.localdate():%-d %b %Y}" in html
    assert 'name="shift_plan"' in html
    done = client.post(
        f"/programs/{program.slug}/advance/",
        {"reason": "Proven early", "shift_plan": "on"},
        follow=True,
    )
    assert "Now in Canary. The later plan moved with it." in done.content.decode()
    assert Phase.objects.get(kind="canary").planned_start == timezone.localdate()


def test_on_plan_there_is_no_shift_to_offer(client, as_user, lead, program):
    today = timezone.localdate()
    Phase.objects.filter(kind="poc").update(planned_end=today - timedelta(days=1))
    Phase.objects.filter(kind="canary").update(planned_start=today)
    assert as_user(lead).get(f"/api/v1/programs/{program.slug}/advance/").json()["shift"] is None
    client.force_login(lead)
    assert 'name="shift_plan"' not in client.get(f"/programs/{program.slug}/advance/").content.decode()


# --- re-planning stays in step with the neighbours ---------------------------------------------------


def replan(client, phase, start: date, end: date, **extra):
    body = {"planned_start": start.isoformat(), "planned_end": end.isoformat(), "reason": "Hardware", **extra}
    return client.post(f"/api/v1/phases/{phase.pk}/replan/", body, format="json")


def test_replanning_into_the_next_phase_is_a_409_naming_both(as_user, lead, db):
    metrics_for_template()
    make_program(lead)  # 1 Jan 2026: cutover is planned from 1 Sep 2026
    canary = Phase.objects.get(kind="canary")
    response = replan(as_user(lead), canary, canary.planned_start, date(2026, 10, 15))
    assert response.status_code == 409, response.json()
    body = response.json()
    assert "Canary" in body["detail"] and "Cutover" in body["detail"] and "overlap" in body["detail"]
    assert body["phases"] == ["Canary", "Cutover"] and body["problem"] == "overlap"
    assert Phase.objects.get(kind="canary").planned_end == date(2026, 8, 31)  # nothing written
    # A re-plan in step needs no confirmation: the last phase's end has no neighbour after it.
    frontier = Phase.objects.get(kind="frontier")
    assert replan(as_user(lead), frontier, frontier.planned_start, date(2027, 3, 31)).status_code == 200


def test_replanning_that_leaves_a_gap_is_a_409_naming_both(as_user, lead, db):
    metrics_for_template()
    make_program(lead)
    cutover = Phase.objects.get(kind="cutover")
    response = replan(as_user(lead), cutover, date(2026, 9, 15), cutover.planned_end)
    assert response.status_code == 409, response.json()
    assert response.json()["phases"] == ["Canary", "Cutover"] and response.json()["problem"] == "gap"
    assert "14 days with no phase" in response.json()["detail"]


def test_a_confirmed_overlap_is_re_planned_and_recorded(as_user, lead, db):
    metrics_for_template()
    make_program(lead)
    canary = Phase.objects.get(kind="canary")
    response = replan(
        as_user(lead), canary, canary.planned_start, date(2026, 10, 15), confirm_overlap_or_gap=True
    )
    assert response.status_code == 200, response.json()
    assert Transition.objects.get(action="replanned").data["confirmed_overlap_or_gap"] is True


def test_the_replan_page_names_both_phases_and_takes_the_confirmation(client, lead, db):
    metrics_for_template()
    program = make_program(lead)
    client.force_login(lead)
    canary = Phase.objects.get(kind="canary")
    body = {"planned_start": "2026-04-01", "planned_end": "2026-10-15", "reason": "Hardware late"}
    refused = client.post(f"/programs/phases/{canary.pk}/replan/", body)
    assert refused.status_code == 409
    assert "Canary would end on 15 Oct 2026, after Cutover starts on 1 Sep 2026" in refused.content.decode()
    done = client.post(f"/programs/phases/{canary.pk}/replan/", {**body, "confirm_overlap_or_gap": "on"})
    assert done.status_code == 302 and done["Location"] == f"/programs/{program.slug}/"


# --- a program before its start date -----------------------------------------------------------------


@pytest.fixture
def future(db, lead, django_capture_on_commit_callbacks) -> Program:
    metrics_for_template()
    with django_capture_on_commit_callbacks(execute=True):
        return make_program(lead, start=timezone.localdate() + timedelta(days=40))


def test_a_program_before_its_start_date_is_not_started_with_no_active_phase_and_month_0(
    as_user, viewer, client, future
):
    future.refresh_from_db()
    assert future.status == "not_started"
    assert not Phase.objects.filter(program=future, status="active").exists()
    assert not Phase.objects.filter(program=future, actual_start__isnull=False).exists()
    body = as_user(viewer).get(f"/api/v1/programs/{future.slug}/").json()
    assert (body["status"], body["month"]) == ("not_started", 0)
    client.force_login(viewer)
    page = client.get(f"/programs/{future.slug}/").content.decode()
    assert "Month 0 of 14" in page and "not started" in page and "started on plan" not in page
    listing = client.get("/programs/").content.decode()
    assert ">not started</span>" in listing and ">PoC</span>" not in listing


def test_the_start_date_starts_it_on_plan(future):
    from program.services import programs_start_due

    assert programs_start_due() == []
    assert programs_start_due(today=future.start_date) == [future.pk]
    future.refresh_from_db()
    poc = Phase.objects.get(program=future, kind="poc")
    assert (future.status, poc.status, poc.actual_start) == ("active", "active", future.start_date)
    assert Transition.objects.filter(action="started", object_id=future.pk).exists()


def test_advancing_a_not_started_program_starts_its_first_phase_today_and_may_shift_the_plan(
    as_user, lead, future
):
    today = timezone.localdate()
    plan, start = _plan(), future.start_date
    response = advance(as_user(lead), future, reason="The cluster is ready early", shift_plan=True)
    assert response.status_code == 200, response.json()
    future.refresh_from_db()
    poc = Phase.objects.get(program=future, kind="poc")
    assert (future.status, poc.status, poc.actual_start) == ("active", "active", today)
    assert future.start_date == today  # month 1 moved with the plan
    assert _plan()["frontier"] == (
        plan["frontier"][0] - (start - today),
        plan["frontier"][1] - (start - today),
    )
    assert as_user(lead).get(f"/api/v1/programs/{future.slug}/").json()["month"] == 1


def test_starting_far_ahead_of_the_start_date_needs_a_reason(as_user, lead, future):
    response = advance(as_user(lead), future)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "reason"
    assert Program.objects.get(pk=future.pk).status == "not_started"


def test_the_migration_puts_back_programs_that_started_in_the_future(future):
    import importlib

    from django.apps import apps

    Program.objects.filter(pk=future.pk).update(status="active")
    Phase.objects.filter(program=future, kind="poc").update(status="active", actual_start=future.start_date)
    migration = importlib.import_module("program.migrations.0009_program_not_started")
    migration.unstart_future_programs(apps, None)
    assert Program.objects.get(pk=future.pk).status == "not_started"
    assert Phase.objects.get(program=future, kind="poc").status == "planned"


def test_the_history_says_the_plan_shifted_in_words(as_user, lead, program):
    from program import selectors
    from program.history import program_history

    canary = Phase.objects.get(kind="canary")
    advance(as_user(lead), program, reason="Proven early", shift_plan=True)
    days = (canary.planned_start - timezone.localdate()).days
    texts = [e.text for e in program_history(selectors.program_get(program.slug)).entries]
    assert any(
        t.startswith(
            f"{lead.first_name or lead.username} shifted the plan of Rebuild {days} days earlier from Canary: "
        )
        and f"Canary {canary.planned_start:%-d %b %Y} → {timezone.localdate():%-d %b %Y}" in t
        for t in texts
    ), texts

"""The rising approval bar: within N weeks before an undecided gate's due date, and throughout the
frontier sprint, medium risk needs one approval more and a program lead among the approvers. Fixed at
submission, shown on the exception page with the rule that applied and why."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from core.errors import ApplicationError
from core.models import Transition
from freeze import services
from freeze.selectors.exceptions import approval_progress
from program import services as program_services
from program.blueprints.schema import BlueprintError, blueprint_check
from program.models import Gate, Phase, Program
from tests.conftest import make_user
from tests.freeze.factories import freeze_setup, submitted_exception

CANARY_EXIT = "New reaches 80% of old on the canary workloads"


@pytest.fixture
def ref(db, lead):
    """A program with a 2-week bar, every gate and the frontier sprint far from today (the real date
    must not decide these tests); each test moves one gate or the sprint next to the change."""
    found = freeze_setup(lead)
    program_services.program_set_approval_bar(actor=lead, program=found["program"], weeks=2)
    today = timezone.now().date()
    Gate.objects.update(due_date=today + timedelta(days=300))
    Phase.objects.filter(kind=Phase.Kind.FRONTIER).update(
        planned_start=today + timedelta(days=300), planned_end=today + timedelta(days=360)
    )
    return found


def due_in(days: int, name: str = CANARY_EXIT) -> Gate:
    Gate.objects.filter(name=name).update(due_date=timezone.now().date() + timedelta(days=days))
    return Gate.objects.get(name=name)


def medium(engineer, ref, **changes):
    return submitted_exception(engineer, ref["trainer"], ref["now"], risk="medium", **changes)


def test_medium_risk_within_the_weeks_before_a_gate_needs_one_more_and_a_lead(engineer, ref):
    due_in(10)
    exception = medium(engineer, ref)
    assert (exception.required_approvals, exception.requires_lead_approval) == (2, True)
    assert "Rising approval bar of Rebuild" in exception.approval_rule
    assert f"before gate '{CANARY_EXIT}' is due" in exception.approval_rule
    assert "within 2 weeks" in exception.approval_rule
    submitted = Transition.objects.get(
        object_id=exception.pk, action="submit", content_type__model="freezeexception"
    )
    assert submitted.data["approval_rule"] == exception.approval_rule


def test_medium_risk_outside_the_weeks_keeps_the_base_rule(engineer, ref):
    due_in(20)
    exception = medium(engineer, ref)
    assert (exception.required_approvals, exception.requires_lead_approval) == (1, False)
    assert exception.approval_rule.startswith("Base rule: medium risk needs 1 approval.")
    assert "does not apply" in exception.approval_rule


def test_a_decided_gate_due_soon_does_not_raise_the_bar(engineer, ref):
    gate = due_in(5)
    Gate.objects.filter(pk=gate.pk).update(status=Gate.Status.PASSED)
    assert medium(engineer, ref).required_approvals == 1


def test_the_frontier_sprint_raises_the_bar_whatever_the_gates(engineer, ref):
    today = timezone.now().date()
    Phase.objects.filter(kind=Phase.Kind.FRONTIER).update(
        planned_start=today - timedelta(days=1), planned_end=today + timedelta(days=40)
    )
    exception = medium(engineer, ref)
    assert (exception.required_approvals, exception.requires_lead_approval) == (2, True)
    assert "during Frontier sprint" in exception.approval_rule


@pytest.mark.parametrize(("risk", "approvals", "lead_needed"), [("low", 1, False), ("high", 2, True)])
def test_low_and_high_risk_follow_the_base_rule_inside_the_bar(engineer, ref, risk, approvals, lead_needed):
    due_in(3)
    exception = submitted_exception(engineer, ref["trainer"], ref["now"], risk=risk)
    assert (exception.required_approvals, exception.requires_lead_approval) == (approvals, lead_needed)
    assert exception.approval_rule.startswith(f"Base rule: {risk} risk")


def test_no_bar_no_raise(engineer, lead, ref):
    program_services.program_set_approval_bar(actor=lead, program=ref["program"], weeks=None)
    due_in(1)
    exception = medium(engineer, ref)
    assert exception.required_approvals == 1 and "sets no rising approval bar" in exception.approval_rule


def test_the_requirement_stays_fixed_at_submission(engineer, component_owner, lead, ref):
    due_in(10)
    exception = medium(engineer, ref)
    program_services.program_set_approval_bar(actor=lead, program=ref["program"], weeks=None)
    due_in(100)
    services.exception_approve(actor=component_owner, exception=exception)
    exception.refresh_from_db()
    assert (exception.status, exception.required_approvals, exception.requires_lead_approval) == (
        "submitted",
        2,
        True,
    )
    services.exception_approve(actor=lead, exception=exception)
    exception.refresh_from_db()
    assert exception.status == "approved"


def test_the_lead_requirement_blocks_completion_until_a_lead_approves(engineer, component_owner, lead, ref):
    due_in(10)
    exception = medium(engineer, ref)
    teammate = make_user("teammate", "training-platform")
    services.exception_approve(actor=component_owner, exception=exception)
    services.exception_approve(actor=teammate, exception=exception)
    exception.refresh_from_db()
    assert exception.status == "submitted"  # the count is reached, the lead is not
    assert approval_progress(exception) == "2 of 2 approvals, a program lead still needed"
    services.exception_approve(actor=lead, exception=exception)
    exception.refresh_from_db()
    assert exception.status == "approved"
    assert approval_progress(exception) == "3 of 2 approvals, a program lead among them"


def test_exception_page_shows_the_rule_and_the_progress(client, engineer, component_owner, ref):
    due_in(10)
    exception = medium(engineer, ref)
    services.exception_approve(actor=component_owner, exception=exception)
    client.force_login(engineer)
    page = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    assert "1 of 2 approvals, a program lead still needed" in page
    assert "Rule applied at submission:" in page and "Rising approval bar of Rebuild" in page
    assert "1 more approval from a program lead" in page


def test_api_shows_the_rule(as_user, engineer, ref):
    due_in(10)
    exception = medium(engineer, ref)
    body = as_user(engineer).get(f"/api/v1/freeze-exceptions/{exception.pk}/").json()
    assert body["required_approvals"] == 2 and body["requires_lead_approval"] is True
    assert body["approval_rule"] == exception.approval_rule


# --- the program's rule: template, service, API, page ------------------------------------------------


def test_the_template_sets_the_bar_and_a_bad_value_is_refused_where_it_is(lead, ref):
    program = Program.objects.get(pk=ref["program"].pk)
    from tests.program.factories import make_program

    fresh = make_program(lead, slug="fresh")
    assert fresh.approval_bar_weeks == 2  # rebuild-14m says 2
    data = {"key": "t", "name": "T", "months": 2, "approval_bar_weeks": 0, "phases": []}
    with pytest.raises(BlueprintError, match="approval_bar_weeks: must be a whole number from 1 to 52"):
        blueprint_check(data, key="t")
    assert program.approval_bar_weeks == 2


def test_only_a_lead_sets_the_bar_and_it_is_audited(lead, engineer, ref):
    with pytest.raises(PermissionDenied):
        program_services.program_set_approval_bar(actor=engineer, program=ref["program"], weeks=3)
    with pytest.raises(ApplicationError) as refused:
        program_services.program_set_approval_bar(actor=lead, program=ref["program"], weeks=0)
    assert refused.value.status == 400 and refused.value.errors[0]["field"] == "approval_bar_weeks"
    program_services.program_set_approval_bar(actor=lead, program=ref["program"], weeks=4)
    record = Transition.objects.filter(action="approval_bar_set").latest("id")
    assert record.data == {"before": 2, "after": 4} and record.actor == lead


def test_api_sets_the_bar(as_user, lead, engineer, ref):
    url = f"/api/v1/programs/{ref['program'].slug}/approval-bar/"
    assert as_user(engineer).put(url, {"approval_bar_weeks": 3}, format="json").status_code == 403
    bad = as_user(lead).put(url, {"approval_bar_weeks": 99}, format="json")
    assert bad.status_code == 400 and "approval_bar_weeks" in str(bad.json())
    ok = as_user(lead).put(url, {"approval_bar_weeks": 3}, format="json")
    assert ok.status_code == 200 and ok.json()["approval_bar_weeks"] == 3
    off = as_user(lead).put(url, {"approval_bar_weeks": None}, format="json")
    assert off.json()["approval_bar_weeks"] is None
    shown = as_user(engineer).get(f"/api/v1/programs/{ref['program'].slug}/").json()
    assert shown["approval_bar_weeks"] is None


def test_program_page_form_for_leads_only_with_feedback(client, lead, engineer, ref):
    slug = ref["program"].slug
    client.force_login(engineer)
    page = client.get(f"/programs/{slug}/").content.decode()
    assert "Within <strong>2 weeks</strong>" in page and "Save approval bar" not in page
    assert client.post(f"/programs/{slug}/approval-bar/", {"approval_bar_weeks": "3"}).status_code == 403
    client.force_login(lead)
    assert "Save approval bar" in client.get(f"/programs/{slug}/").content.decode()
    done = client.post(f"/programs/{slug}/approval-bar/", {"approval_bar_weeks": "3"}, follow=True)
    assert "Approval bar set to 3 weeks before a gate." in done.content.decode()
    refused = client.post(f"/programs/{slug}/approval-bar/", {"approval_bar_weeks": "0"}, follow=True)
    assert "Approval bar not changed" in refused.content.decode()
    off = client.post(f"/programs/{slug}/approval-bar/", {"approval_bar_weeks": ""}, follow=True)
    assert "Approval bar turned off." in off.content.decode()
    assert Program.objects.get(slug=slug).approval_bar_weeks is None
    assert "set the freeze-exception approval bar of Rebuild to off" in off.content.decode()

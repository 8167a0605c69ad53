"""Issue 29, items 1 and 2 through the Django client: the gate page opens with its verdict, says effects
one way and folds the statistics away; a decided gate shows its decision and frozen evidence; advancing
lists and closes the phase's undecided gates, which then refuse every change (service, API, page)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import ApplicationError
from core.models import NotificationReceipt, Transition
from core.notifications import notification_send
from program import services
from program.models import Gate, Phase
from tests.program.factories import make_program, metrics_for_template, observe, spread

NOTE = "Throughput holds on the 8B fine-tune; data-loader wait is tracked in cutover."


@pytest.fixture
def ref(db, lead):
    ref = metrics_for_template()
    ref["program"] = make_program(lead)  # started 1 Jan 2026: PoC is active
    # Throughput (higher is better) 24 % up; step time (lower is better) 10 % up, so worse.
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(1000, 80))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(1240, 80))
    observe(ref["step"], ref["legacy"], ref["medium"], spread(800, 80))
    observe(ref["step"], ref["rebuilt"], ref["medium"], spread(880, 80))
    return ref


@pytest.fixture
def gate(ref, lead):
    """A PoC milestone: one required criterion that passes, one advisory that fails."""
    poc = Phase.objects.get(program=ref["program"], kind="poc")
    gate = services.gate_add(
        actor=lead, phase=poc, name="Fine-tune holds up", kind="milestone", due_date=poc.planned_end
    )
    services.criterion_add(
        actor=lead,
        gate=gate,
        name="Throughput at least 0.8× legacy",
        kind="relative",
        metric=ref["throughput"],
        workload=ref["medium"],
        operator="gte",
        threshold=0.8,
    )
    services.criterion_add(
        actor=lead,
        gate=gate,
        name="Step time no worse",
        kind="relative",
        metric=ref["step"],
        workload=ref["medium"],
        operator="gte",
        threshold=1.0,
        required=False,
    )
    services.gate_evaluate(gate=gate)
    return Gate.objects.get(pk=gate.pk)


def _page(client, user, gate) -> str:
    client.force_login(user)
    response = client.get(f"/programs/gates/{gate.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def _outside_details(html: str) -> str:
    return re.sub(r"<details.*?</details>", "", html, flags=re.S)


def test_the_gate_page_opens_with_its_verdict(client, viewer, gate):
    html = _page(client, viewer, gate)
    sentence = "1 of 1 required criterion passes; 1 advisory fails → ready to pass."
    assert sentence in html
    verdict_at = html.index('data-testid="verdict"')
    assert verdict_at < html.index('id="criteria-heading"') < html.index('data-testid="statistics"')
    assert 'data-state="ready"' in html and ">ready to pass</span>" in html


def test_effects_are_said_one_way_and_the_ratio_and_method_fold_away(client, viewer, gate):
    html = _page(client, viewer, gate)
    assert '<strong data-testid="effect">candidate 24 % better</strong>' in html
    assert '<strong data-testid="effect">candidate 9.1 % worse</strong>' in html
    assert "needs: at most 20 % worse" in html and "needs: no worse than the baseline" in html
    shown = _outside_details(html)
    assert "×" not in shown.replace("0.8× legacy", "")  # the criterion's own name may say it
    for name in ("Fieller", "Welch", "MOVER", "order-statistic"):
        assert name not in shown
    # In the details: the ratio, and the method with what it means.
    assert "relative performance 1.24×" in html
    assert (
        "Method: t-interval per side, Welch&#x27;s t-test, Fieller&#x27;s interval for the ratio of means"
        in html
    )
    assert "compares averages, allowing each side its own spread" in html


def test_an_advisory_fail_is_labelled_advisory_not_like_a_required_fail(client, viewer, gate):
    html = _page(client, viewer, gate)
    assert (
        '<span class="badge advisory fail" title="Advisory: shown, never blocks the gate">advisory · fail</span>'
        in html
    )
    assert '<span class="badge pass">pass</span>' in html
    assert '<span class="badge fail">' not in html


def test_a_decided_gate_shows_its_decision_and_frozen_evidence_not_evaluate_now(
    client, lead, ref, gate, as_user
):
    services.gate_decide(gate=gate, actor=lead, decision="pass", note=NOTE)
    # Later data and a later evaluation (the API still evaluates a decided gate) change nothing shown.
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(2000, 400), tag="late-")
    assert as_user(lead).post(f"/api/v1/gates/{gate.pk}/evaluate/").status_code == 200
    html = _page(client, lead, gate)
    assert "Evaluate now" not in html
    assert not re.search(r"[Ee]valuated [^<]* ago", html)
    assert (
        "Passed by" in html
        and "the frozen evidence: 1 of 1 required criterion passed; 1 advisory failed." in html
    )
    decision = html[html.index('data-testid="decision"') :]
    assert "Rationale" in decision and NOTE in decision
    assert "Evidence frozen at the decision, evaluated" in html
    assert "Criteria as the decision froze them" in html
    assert '<strong data-testid="effect">candidate 24 % better</strong>' in html  # not the later 2×


def test_the_advance_page_lists_the_phases_undecided_gates_and_what_happens_to_them(client, lead, ref, gate):
    exit_gate = Gate.objects.get(phase__kind="poc", kind="exit")
    services.gate_decide(gate=exit_gate, actor=lead, decision="waive", note="Proven on the whiteboard")
    client.force_login(lead)
    html = client.get(f"/programs/{ref['program'].slug}/advance/").content.decode()
    closes = html[html.index('data-testid="closes"') :]
    closes = closes[: closes.index("</dd>")]
    milestone = Gate.objects.get(phase__kind="poc", name="New framework trains a small job")
    assert "2 undecided gates</strong> of Proof of concept" in closes
    assert milestone.name in closes and gate.name in closes
    assert "Advancing closes them as “not decided — phase completed”" in closes
    assert exit_gate.name not in closes  # the exit gate has its own line


def test_advancing_closes_the_undecided_gates_with_an_audit_row_each(lead, ref, gate, as_user):
    exit_gate = Gate.objects.get(phase__kind="poc", kind="exit")
    services.gate_decide(gate=exit_gate, actor=lead, decision="waive", note="Proven on the whiteboard")
    preview = as_user(lead).get(f"/api/v1/programs/{ref['program'].slug}/advance/").json()
    assert sorted(g["name"] for g in preview["closes"]) == sorted(
        ["New framework trains a small job", gate.name]
    )
    services.program_advance(actor=lead, program=ref["program"], reason="Early: the PoC answered it")
    gate.refresh_from_db()
    assert gate.status == Gate.Status.CLOSED
    assert Gate.objects.get(pk=exit_gate.pk).status == Gate.Status.WAIVED  # decided gates keep theirs
    row = Transition.objects.get(action="closed", object_id=gate.pk)
    assert (row.from_state, row.to_state, row.reason, row.actor) == (
        "ready",
        "closed",
        "not decided — phase completed",
        lead,
    )
    completed = Transition.objects.get(action="completed", data__next_phase="Canary")
    assert sorted(completed.data["closed_gates"]) == sorted(["New framework trains a small job", gate.name])


def test_advancing_clears_the_closed_gates_ready_for_review_notices(lead, ref, gate):
    exit_gate = Gate.objects.get(phase__kind="poc", kind="exit")
    services.gate_decide(gate=exit_gate, actor=lead, decision="waive", note="Proven on the whiteboard")
    notification_send(
        event="gate.ready",
        subject=f"Gate ready: {gate.name}",
        body="",
        link=f"/programs/gates/{gate.pk}/",
        users=[lead],
    )
    receipts = NotificationReceipt.objects.filter(notification__link=f"/programs/gates/{gate.pk}/")
    assert receipts.filter(done_at__isnull=True).exists()
    services.program_advance(actor=lead, program=ref["program"], reason="Early: the PoC answered it")
    assert not receipts.filter(done_at__isnull=True).exists()


@pytest.fixture
def closed(lead, ref, gate):
    exit_gate = Gate.objects.get(phase__kind="poc", kind="exit")
    services.gate_decide(gate=exit_gate, actor=lead, decision="waive", note="Proven on the whiteboard")
    services.program_advance(actor=lead, program=ref["program"], reason="Early: the PoC answered it")
    return Gate.objects.get(pk=gate.pk), Gate.objects.get(pk=exit_gate.pk)


def test_gates_of_a_completed_phase_refuse_evaluation_in_the_service(closed, lead):
    for gate in closed:
        with pytest.raises(ApplicationError) as refused:
            services.gate_evaluate(gate=gate, actor=lead)
        assert refused.value.status == 409
        assert refused.value.message == (
            "Phase 'Proof of concept' is completed: its gates are history, so evaluating is not allowed."
        )
        with pytest.raises(ApplicationError):
            services.gate_evaluate(gate=gate)  # the system neither


def test_the_api_refuses_every_change_to_a_closed_gate(closed, lead, as_user):
    gate, exit_gate = closed
    api = as_user(lead)
    criterion = gate.criteria.first()
    answers = [
        api.post(f"/api/v1/gates/{gate.pk}/evaluate/"),
        api.post(f"/api/v1/gates/{gate.pk}/decision/", {"decision": "fail", "note": "late"}, format="json"),
        api.patch(f"/api/v1/criteria/{criterion.pk}/", {"threshold": 0.5}, format="json"),
        api.post(
            f"/api/v1/gates/{gate.pk}/criteria/",
            {"name": "Runbook", "kind": "manual"},
            format="json",
        ),
        api.post(f"/api/v1/gates/{exit_gate.pk}/evaluate/"),
        api.post(f"/api/v1/gates/{exit_gate.pk}/reopen/", {"reason": "again"}, format="json"),
    ]
    for answer in answers:
        assert answer.status_code == 409, answer.content
        assert "Phase 'Proof of concept' is completed: its gates are history" in answer.json()["detail"]
    assert Gate.objects.get(pk=gate.pk).status == "closed"
    assert Gate.objects.get(pk=exit_gate.pk).status == "waived"


def test_the_closed_gate_page_shows_it_closed_and_offers_nothing(client, lead, closed, ref):
    gate, _ = closed
    html = _page(client, lead, gate)
    assert 'data-state="closed"' in html and ">closed (not decided)</span>" in html
    assert "Not decided — Proof of concept completed on" in html
    assert "Evaluate now" not in html and "Record decision" not in html and "Add criterion" not in html
    client.force_login(lead)
    refused = client.post(f"/programs/gates/{gate.pk}/evaluate/")
    assert refused.status_code == 409
    assert "its gates are history, so evaluating is not allowed" in refused.content.decode()
    program_page = client.get(f"/programs/{ref['program'].slug}/").content.decode()
    assert '<span class="badge closed">closed (not decided)</span>' in program_page


def test_closed_gates_leave_the_undecided_sweeps(closed):
    gate, _ = closed
    assert not Gate.objects.filter(pk=gate.pk, status__in=Gate.UNDECIDED).exists()
    assert gate.decided and gate.closed


def test_the_program_pages_gate_table_becomes_cards_and_a_future_start_reads_in_words(client, lead, ref):
    client.force_login(lead)
    html = client.get(f"/programs/{ref['program'].slug}/").content.decode()
    assert 'class="cards gate-table"' in html
    assert '<td data-label="Status" class="key"><span class="badge open">open</span></td>' in html
    later = make_program(lead, slug="later", start=timezone.localdate() + timedelta(days=50))
    page = client.get(f"/programs/{later.slug}/").content.decode()
    stat = page.split('data-testid="program-month"')[1].split("</div>")[0]
    assert f"starts {later.start_date:%-d %b %Y}, in 1\xa0month" in stat
    listing = client.get("/programs/").content.decode()
    assert f"starts {later.start_date:%-d %b %Y}, in 1\xa0month" in listing
    # Started early (issue 29 saw "started −50 d"): in words.
    services.program_advance(actor=lead, program=later, reason="The hardware came early")
    page = client.get(f"/programs/{later.slug}/").content.decode()
    assert "started 50 days early" in page and "−50" not in page

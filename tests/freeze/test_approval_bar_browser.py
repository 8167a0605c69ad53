"""In the real Chromium, at desktop and phone width: an engineer files a medium-risk exception whose
change starts a week before a gate is due, names a gate metric, submits it, and the page shows the
rising approval bar that applied, why, and that a program lead is still needed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from freeze.models import FreezeException
from program.models import Gate, Program
from tests.browser import screenshot, sign_in
from tests.freeze.test_exception_pages_browser import WIDTHS, fits, page_at  # noqa: F401 - the fixture


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_a_medium_risk_exception_near_a_gate_shows_the_rule_that_applied(page_at, width):  # noqa: F811
    start = (timezone.now() + timedelta(days=1)).replace(hour=14, minute=30)
    program = Program.objects.get(slug="frontier-rebuild")
    Program.objects.filter(pk=program.pk).update(approval_bar_weeks=2)
    gate = Gate.objects.filter(phase__program=program, status__in=Gate.UNDECIDED).order_by("pk").first()
    Gate.objects.filter(pk=gate.pk).update(due_date=start.date() + timedelta(days=7))

    page = page_at(width)
    sign_in(page, "engineer")
    page.goto("/freeze/exceptions/new/")
    page.select_option("select[name=component]", "trainer-core")
    page.fill("input[name=title]", f"NCCL upgrade at {width}px")
    for field in ("change", "justification", "rollback_plan"):
        page.fill(f"textarea[name={field}]", "x")
    page.select_option("select[name=risk]", "medium")
    page.check("input[name=affected_metrics][value=step-time]")
    page.fill("textarea[name=expected_impacts]", "step-time worse 3")  # needed to submit
    page.fill("input[name=change_starts_at_0]", f"{start:%Y-%m-%d}")
    page.fill("input[name=change_starts_at_1]", "14:30")
    page.fill("input[name=change_ends_at_0]", f"{start:%Y-%m-%d}")
    page.fill("input[name=change_ends_at_1]", "18:45")
    page.click("button:has-text('Save draft')")
    page.wait_for_selector("#flash >> text=Draft saved")
    expect(page.get_by_test_id("affected-metrics")).to_contain_text("step-time")
    expect(page.get_by_test_id("approvals")).to_contain_text("decided when it is submitted")

    page.click("button:has-text('Submit for approval')")
    page.wait_for_selector("h1 .badge.submitted")
    page.wait_for_selector("#flash >> text=Submitted")
    rule = page.get_by_test_id("approval-rule")
    expect(rule).to_contain_text("Rising approval bar of")
    expect(rule).to_contain_text(f"before gate '{gate.name}' is due")
    expect(page.get_by_test_id("approval-progress")).to_have_text(
        "0 of 2 approvals, a program lead still needed"
    )
    assert fits(page)
    screenshot(page, f"exception-approval-bar-{width}")

    exception = FreezeException.objects.get(title=f"NCCL upgrade at {width}px")
    assert (exception.required_approvals, exception.requires_lead_approval) == (2, True)
    assert list(exception.affected_metrics.values_list("key", flat=True)) == ["step-time"]

    # The owner team's approval reaches neither the count nor the lead; a lead's completes it.
    for username, progress in (("owner", "1 of 2 approvals, a program lead still needed"), ("lead", None)):
        reviewer = page_at(width)
        sign_in(reviewer, username)
        reviewer.goto(f"/freeze/exceptions/{exception.pk}/")
        reviewer.click("button:has-text('Approve')")
        reviewer.wait_for_selector("#flash >> text=Your approval is recorded")
        if progress:
            expect(reviewer.get_by_test_id("approval-progress")).to_have_text(progress)
    reviewer.wait_for_selector("h1 .badge.approved")

    # The gate on step-time lists it, and its history says why it re-evaluated.
    step_gate = Gate.objects.filter(phase__program=program, criteria__metric__key="step-time").first()
    reviewer.goto(f"/programs/gates/{step_gate.pk}/")
    panel = reviewer.locator("section.gate-panel", has_text="Active exceptions")
    expect(panel).to_contain_text(f"#{exception.pk} NCCL upgrade at {width}px")
    expect(panel).to_contain_text("touches step-time")
    if not step_gate.decided:
        expect(reviewer.locator("main")).to_contain_text(
            f"exception #{exception.pk} 'NCCL upgrade at {width}px' approved"
        )
    assert fits(reviewer)
    screenshot(reviewer, f"gate-exceptions-panel-{width}")

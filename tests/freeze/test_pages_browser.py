"""A framework engineer files an exception and a component owner approves it, in the real Chromium."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from freeze.models import FreezeException
from tests.browser import screenshot, sign_in


def fill_utc(page, name: str, moment) -> None:
    """The form's UTC date-time: a date picker and a 24-hour HH:MM box."""
    page.fill(f"input[name={name}_0]", moment.strftime("%Y-%m-%d"))
    page.fill(f"input[name={name}_1]", moment.strftime("%H:%M"))


@pytest.mark.browser
def test_engineer_files_and_owner_approves(browser, live_server, demo):
    contexts = [
        browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        for _ in range(2)
    ]
    try:
        engineer_files_then_owner_approves(*(context.new_page() for context in contexts))
    finally:
        for context in contexts:
            context.close()


def engineer_files_then_owner_approves(engineer, owner):
    sign_in(engineer, "engineer")
    engineer.goto("/freeze/")
    assert "Cutover wave 2 stabilisation" in engineer.inner_text("main")
    screenshot(engineer, "freeze-list")
    engineer.click("text=File an exception")
    engineer.select_option("select[name=component]", "trainer-core")
    engineer.fill("input[name=title]", "Bump NCCL timeout for the 70B canary")
    engineer.fill("textarea[name=change]", "NCCL_TIMEOUT 600 -> 1200 in the trainer launcher.")
    engineer.fill("textarea[name=justification]", "Checkpoint barriers time out on 4k GPUs.")
    engineer.select_option("select[name=risk]", "medium")
    engineer.fill("textarea[name=rollback_plan]", "Revert the launcher flag; 5 minutes.")
    start = timezone.now() + timedelta(days=1)
    fill_utc(engineer, "change_starts_at", start)
    fill_utc(engineer, "change_ends_at", (start + timedelta(hours=6)))
    screenshot(engineer, "exception-form")
    engineer.click("button:has-text('Save draft')")
    engineer.wait_for_selector("button:has-text('Submit for approval')")
    engineer.click("button:has-text('Submit for approval')")
    engineer.wait_for_selector("h1 .badge.submitted")
    exception = FreezeException.objects.get(title="Bump NCCL timeout for the 70B canary")

    sign_in(owner, "owner")
    owner.goto("/freeze/queues/")
    owner.click(f"text=#{exception.pk} Bump NCCL timeout")
    owner.fill("textarea[name=comment]", "Seen this on the canary too.")
    owner.click("button:has-text('Approve')")
    owner.wait_for_selector("h1 .badge.approved")
    screenshot(owner, "exception-approved")
    exception.refresh_from_db()
    assert exception.status == "approved"
    assert "Approve" not in [b.inner_text() for b in owner.locator("button").all()]


@pytest.mark.browser
def test_filing_on_a_frozen_component_shows_why(page, demo):
    sign_in(page, "engineer")
    page.goto("/freeze/exceptions/new/")
    page.select_option("select[name=component]", "nccl")
    for field in ("title",):
        page.fill(f"input[name={field}]", "Upgrade NCCL")
    for field in ("change", "justification", "rollback_plan"):
        page.fill(f"textarea[name={field}]", "x")
    start = timezone.now() + timedelta(days=1)
    fill_utc(page, "change_starts_at", start)
    fill_utc(page, "change_ends_at", (start + timedelta(hours=2)))
    page.click("button:has-text('Save draft')")
    assert "is frozen in 'Cutover wave 2 stabilisation'" in page.inner_text("[role=alert]")

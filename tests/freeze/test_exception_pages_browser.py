"""In the real Chromium, at desktop and phone width (issue 12): the exception form shows the level
before filing and reads 24-hour UTC times, a flash message shows once, and the all-exceptions page
filters on the effective status."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from freeze.models import FreezeException
from tests.browser import screenshot, sign_in
from tests.core.test_security_headers import _watch_for_csp_violations

WIDTHS = [1280, 390]


@pytest.fixture
def page_at(browser, live_server, demo):
    contexts = []

    def _open(width: int):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        contexts.append(context)
        return context.new_page()

    yield _open
    for context in contexts:
        context.close()


def fits(page) -> bool:
    """No sideways scrolling of the whole page."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_the_form_shows_the_level_before_filing_and_flashes_once(page_at, width):
    page = page_at(width)
    problems = _watch_for_csp_violations(page)
    sign_in(page, "engineer")
    page.goto("/freeze/exceptions/new/")
    hint = page.locator("#level-hint")
    assert "frozen now" in page.locator("select[name=component] option[value=nccl]").inner_text()
    page.select_option("select[name=component]", "nccl")
    expect(hint).to_contain_text("nccl")
    assert "Frozen: no exception can be filed" in hint.inner_text()
    page.select_option("select[name=component]", "trainer-core")
    expect(hint).to_contain_text("trainer-core")
    assert "approval" in hint.inner_text() and "An exception is needed" in hint.inner_text()

    page.fill("input[name=title]", f"Pin allocator at {width}px")
    for field in ("change", "justification", "rollback_plan"):
        page.fill(f"textarea[name={field}]", "x")
    start = (timezone.now() + timedelta(days=1)).replace(hour=14, minute=30)
    page.fill("input[name=change_starts_at_0]", f"{start:%Y-%m-%d}")
    page.fill("input[name=change_starts_at_1]", "14:30")
    page.fill("input[name=change_ends_at_0]", f"{start:%Y-%m-%d}")
    page.fill("input[name=change_ends_at_1]", "18:45")
    # A 24-hour clock: what is shown is what was typed, no AM/PM anywhere.
    assert page.input_value("input[name=change_starts_at_1]") == "14:30"
    assert page.input_value("input[name=change_ends_at_1]") == "18:45"
    assert "PM" not in page.locator("form.exception-form").inner_text()
    assert fits(page)
    screenshot(page, f"exception-form-level-hint-{width}")

    page.click("button:has-text('Save draft')")
    page.wait_for_selector("#flash >> text=Draft saved")
    exception = FreezeException.objects.get(title=f"Pin allocator at {width}px")
    assert (exception.change_starts_at.hour, exception.change_ends_at.hour) == (14, 18)
    page.click("button:has-text('Submit for approval')")  # htmx: only the body is swapped
    page.wait_for_selector("h1 .badge.submitted")
    page.wait_for_selector("#flash >> text=Submitted")
    main = page.locator("main").inner_text()
    assert "Draft saved" not in main and main.count("Submitted: the approvers") == 1
    assert "May approve" in main and "Still needed" in main
    screenshot(page, f"exception-submitted-flash-once-{width}")
    assert not [p for p in problems if "CSP" in p or "Refused" in p], problems


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_all_exceptions_filter_and_count(page_at, width):
    page = page_at(width)
    problems = _watch_for_csp_violations(page)
    sign_in(page, "viewer")
    page.goto("/freeze/exceptions/")
    rows = page.locator("[data-testid=exception-row]")
    assert rows.count() == FreezeException.objects.count()
    assert fits(page)
    screenshot(page, f"exceptions-all-{width}")

    page.select_option("select[name=status]", "approved")
    page.select_option("select[name=component]", "checkpoint-store")
    page.click("form.filters button:has-text('Filter')")
    page.wait_for_url("**status=approved**")
    assert rows.count() == 1 and "Enable parallel shard upload" in rows.first.inner_text()
    assert rows.first.locator(".badge.approved").count() == 1
    screenshot(page, f"exceptions-all-filtered-{width}")

    page.click("[data-status=expired]")
    page.wait_for_url("**status=expired**")
    for row in rows.all():
        assert "expired" in row.inner_text()
    assert fits(page)
    assert not [p for p in problems if "CSP" in p or "Refused" in p], problems

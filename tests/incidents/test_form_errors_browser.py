"""A refused submit puts the error summary where the eye is (issue 29): at the top of the form, in
view and focused, its links naming fields by their labels; a runbook tick survives a reload; Resolve
asks for the times. Chromium at 1280 and 390 px."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from incidents.models import BugClass, Incident
from tests.browser import SCREENSHOTS, screenshot, sign_in

FMT = "%Y-%m-%dT%H:%M"


def open_incident() -> Incident:
    """An open incident of the demo's systems, filed through the service (the demo's are resolved)."""
    from django.contrib.auth.models import User

    from freeze.models import Component
    from incidents import services
    from metrics.models import System

    opened = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=6)
    return services.incident_file(
        actor=User.objects.get(username="engineer"),
        title="Checkpoint restore hangs on rank 3",
        system=System.objects.get(key="rebuilt"),
        component=Component.objects.get(key="nccl"),
        bug_class=BugClass.objects.get(key="checkpoint-restore"),
        severity="sev2",
        opened_at=opened,
        detected_at=opened + timedelta(minutes=20),
    )


def in_view(page, selector: str) -> bool:
    """The element's top is in the upper half of the window (a sub-pixel above counts: phone rounding)."""
    return page.evaluate(
        """(selector) => { const r = document.querySelector(selector).getBoundingClientRect();
        return r.top > -2 && r.top < window.innerHeight / 2; }""",
        selector,
    )


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_a_refused_incident_shows_a_focused_error_summary_linked_to_the_field(
    browser, live_server, demo, width
):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 860})
    page = context.new_page()
    try:
        sign_in(page, "engineer")
        page.goto("/incidents/")
        form = page.locator("[data-testid=incident-form]")
        opened = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=5)
        form.locator("input[name=title]").fill("Loader stalls on shard 12")
        form.locator("select[name=system]").select_option("rebuilt")
        form.locator("select[name=component]").select_option("nccl")
        form.locator("select[name=bug_class]").select_option("data-pipeline")
        form.locator("input[name=opened_at]").fill(opened.strftime(FMT))
        form.locator("input[name=detected_at]").fill((opened - timedelta(hours=1)).strftime(FMT))
        form.locator("button[type=submit]").click()
        page.wait_for_load_state("load")
        page.wait_for_selector("[data-testid=error-summary]")

        summary = page.locator("[data-testid=error-summary]")
        assert page.evaluate("document.activeElement.dataset.testid") == "error-summary"
        assert in_view(page, "[data-testid=error-summary]")
        link = summary.locator("a[href='#id_detected_at']")
        assert link.inner_text() == "Detected at: Detected at must not be before opened at."
        screenshot(page, f"incident-error-summary-{width}")
        page.screenshot(
            path=str(SCREENSHOTS / f"incident-error-summary-in-view-{width}.png")
        )  # what the eye sees

        link.click()  # the link puts the focus in the field
        assert page.evaluate("document.activeElement.id") == "id_detected_at"
        assert not Incident.objects.filter(title="Loader stalls on shard 12").exists()
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_runbook_ticks_persist_and_resolve_takes_the_stated_times(browser, live_server, demo, width):
    incident = open_incident()
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 860})
    page = context.new_page()
    try:
        sign_in(page, "engineer")
        page.goto(f"/incidents/{incident.pk}/")
        boxes = page.locator("[data-testid=checklist] input[type=checkbox]")
        first_unticked = next(i for i in range(boxes.count()) if not boxes.nth(i).is_checked())
        boxes.nth(first_unticked).check()
        page.wait_for_selector("[data-testid=checklist-status]:has-text('Saved:')")
        page.reload()
        assert page.locator("[data-testid=checklist] input[type=checkbox]").nth(first_unticked).is_checked()

        page.click("summary:has-text('Resolve')")
        resolve = page.locator("[data-testid=resolve-form]")
        assert resolve.locator("input[name='resolve-resolved_at']").input_value()  # now, by default
        future = (datetime.now(UTC) + timedelta(days=2)).strftime(FMT)
        resolve.locator("input[name='resolve-resolved_at']").fill(future)
        screenshot(page, f"incident-resolve-form-{width}")
        resolve.locator("button[type=submit]").click()
        page.wait_for_selector("[data-testid=resolve-form] [data-testid=error-summary]")
        assert page.evaluate("document.activeElement.dataset.testid") == "error-summary"
        assert (
            "Resolved at must not be in the future."
            in page.locator("[data-testid=error-summary]").inner_text()
        )
        screenshot(page, f"incident-resolve-refused-{width}")

        stated = incident.detected_at.astimezone(UTC) + timedelta(minutes=30)
        resolve = page.locator("[data-testid=resolve-form]")
        resolve.locator("input[name='resolve-mitigated_at']").fill(stated.strftime(FMT))
        resolve.locator("input[name='resolve-resolved_at']").fill((stated + timedelta(hours=1)).strftime(FMT))
        resolve.locator("button[type=submit]").click()
        page.wait_for_selector(".flash-success")
        incident.refresh_from_db()
        assert incident.resolved_at == (stated + timedelta(hours=1)).replace(second=0, microsecond=0)
        assert page.locator("[data-testid=history-row]").first.is_visible()
        screenshot(page, f"incident-resolved-history-{width}")
    finally:
        context.close()

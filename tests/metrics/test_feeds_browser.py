"""The feeds page in the real Chromium on the demo data, at desktop width and at 390 px."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from metrics.models import MetricDefinition, Observation, System, Workload
from metrics.selectors.feeds import feeds_list
from tests.browser import SCREENSHOTS, screenshot, sign_in
from tests.core.test_security_headers import _watch_for_csp_violations


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_feeds_page_shows_fresh_and_stale_feeds(browser, live_server, demo, width):
    # One feed fresh from a receiver beside the demo's batch rows.
    Observation.objects.create(
        definition=MetricDefinition.objects.get(key="step-time", status="active"),
        system=System.objects.get(key="rebuilt"),
        workload=Workload.objects.order_by("key").first(),
        value=700.0,
        unit="ms",
        observed_at=timezone.now() - timedelta(minutes=3),
        run_id="browser-fresh",
        source="otlp",
    )
    stale = sum(f.stale for f in feeds_list())
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    problems = _watch_for_csp_violations(page)
    try:
        sign_in(page, "viewer")
        page.goto("/metrics/")
        page.click("text=Feeds")
        page.wait_for_url("**/metrics/feeds/")
        assert page.locator("h1").inner_text() == "Feeds"
        assert page.locator("tr.is-stale").count() == stale
        fresh = page.locator("#feed-step-time-2 tr", has_text="otlp")
        assert "fresh" in fresh.inner_text()
        # Nothing wider than the screen except inside a table's own scroll box.
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        screenshot(page, f"feeds-{width}")
        page.screenshot(path=str(SCREENSHOTS / f"feeds-{width}-top.png"))  # the first screen, legible
        assert problems == []
    finally:
        context.close()

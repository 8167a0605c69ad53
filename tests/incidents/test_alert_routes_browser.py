"""An engineer goes from the incidents page to the alert routes, finds the demo's unrouted alert, routes
it with "Route it", and sees the new route, in Chromium at desktop width and at 390 px."""

from __future__ import annotations

import pytest

from incidents.models import AlertRoute
from tests.browser import screenshot, sign_in


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_engineer_routes_the_unrouted_alert_from_the_incidents_page(browser, live_server, demo, width):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, "engineer")
        page.goto("/incidents/")
        page.click("a:has-text('Alert routes')")
        unrouted = page.locator("[data-testid=unrouted-row]", has_text="GpuXidErrors")
        unrouted.locator("a:has-text('Route it')").click()
        form = page.locator("[data-testid=route-form]")
        assert form.locator("input[name=matchers]").input_value() == "alertname=GpuXidErrors, cluster=rebuilt"
        form.locator("select[name=system]").select_option("rebuilt")
        form.locator("select[name=component]").select_option("gpu-firmware")
        form.locator("select[name=bug_class]").select_option("hardware-fault")
        screenshot(page, f"alert-routes-form-{width}")
        form.locator("button[type=submit]").click()
        page.wait_for_selector(".flash-success")
        row = page.locator("[data-testid=route-row]", has_text="alertname=GpuXidErrors")
        assert "Hardware fault" in row.inner_text()
        assert "matched by position" in unrouted.locator("[data-testid=unrouted-route]").inner_text()
        screenshot(page, f"alert-routes-{width}")
        assert AlertRoute.objects.filter(
            matchers={"alertname": "GpuXidErrors", "cluster": "rebuilt"}
        ).exists()
    finally:
        context.close()

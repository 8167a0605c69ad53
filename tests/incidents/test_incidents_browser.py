"""An engineer files an incident on the incidents page, resolves it on its page, and sees the MTTR
chart move, in Chromium at desktop width and at 390 px."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from incidents.models import Incident
from metrics.models import Observation
from tests.browser import SCREENSHOTS, screenshot, sign_in


def speed_row(page, bug_class: str, system: str) -> list[str]:
    row = page.locator("[data-testid=speed-row]", has_text=bug_class).filter(has_text=system)
    return [cell.strip() for cell in row.locator("td").all_inner_texts()]


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_engineer_files_and_resolves_an_incident_and_the_mttr_chart_moves(browser, live_server, demo, width):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, "engineer")
        page.goto("/incidents/")
        before_row = speed_row(page, "Communication hang", "rebuilt")
        before_bars = page.locator("[data-testid=mttr-bars]").inner_html()
        form = page.locator("[data-testid=incident-form]")
        opened = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=300)
        form.locator("input[name=title]").fill("All-reduce hangs after NIC firmware update")
        form.locator("select[name=system]").select_option("rebuilt")
        form.locator("select[name=component]").select_option("nccl")
        form.locator("select[name=bug_class]").select_option("communication-hang")
        form.locator("select[name=severity]").select_option("sev1")
        form.locator("input[name=opened_at]").fill(opened.strftime("%Y-%m-%dT%H:%M"))
        form.locator("input[name=detected_at]").fill((opened + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"))
        screenshot(page, f"incidents-file-form-{width}")
        form.locator("button[type=submit]").click()
        page.wait_for_selector(".flash-success")
        assert page.locator("[data-testid=incident-state]").inner_text() == "open"
        incident = Incident.objects.get(title="All-reduce hangs after NIC firmware update")
        assert incident.checklist[0]["done"] is False

        page.locator("[data-testid=checklist] input[type=checkbox]").first.check()
        page.click("button:has-text('Save checklist')")
        page.wait_for_selector(".flash-success")
        page.click("button:has-text('Resolve now')")
        page.wait_for_selector(".flash-success")
        assert page.locator("[data-testid=incident-state]").inner_text() == "resolved"
        screenshot(page, f"incidents-resolved-{width}")
        incident.refresh_from_db()
        assert incident.checklist[0]["done"] is True
        mttr = Observation.objects.get(run_id=f"incident-{incident.pk}", definition__key="mttr")
        assert mttr.value == pytest.approx(300, abs=0.2)

        page.goto("/incidents/")
        after_row = speed_row(page, "Communication hang", "rebuilt")
        assert int(after_row[3]) == int(before_row[3]) + 1  # resolved
        assert after_row[6] != before_row[6]  # the median moved
        assert page.locator("[data-testid=mttr-bars]").inner_html() != before_bars
        SCREENSHOTS.mkdir(exist_ok=True)
        page.locator("#mttr-chart").screenshot(path=str(SCREENSHOTS / f"incidents-mttr-chart-{width}.png"))
    finally:
        context.close()

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

        page.locator("[data-testid=checklist] input[type=checkbox]").first.check()  # saved as ticked
        page.wait_for_selector("[data-testid=checklist-status]:has-text('Saved: 1 of')")
        page.click("summary:has-text('Resolve')")  # asks first, with the times (now by default)
        page.click("button:has-text('Resolve incident')")
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


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_the_incidents_list_reads_without_sideways_scrolling(browser, live_server, demo, width):
    """A table at desktop width; at 390 px each incident is a card (title, then labelled facts), and
    neither the page nor the table scrolls sideways."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, "engineer")
        page.goto("/incidents/")
        table = page.locator("[data-testid=incidents-table]")
        rows = table.locator("[data-testid=incident-row]")
        assert rows.count() > 0
        wrap = table.locator("xpath=..")
        assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        first = rows.first
        title, state = first.locator("td").nth(0), first.locator("td").nth(1)
        title_box, state_box = title.bounding_box(), state.bounding_box()
        if width == 390:
            assert not table.locator("thead").is_visible()
            # The title spans the card; the facts sit below it, each under its own label.
            assert title_box["width"] > 300 and state_box["y"] >= title_box["y"] + title_box["height"] - 1
            assert state.evaluate("el => getComputedStyle(el, '::before').content") == '"State"'
        else:
            assert table.locator("thead").is_visible()
            assert abs(state_box["y"] - title_box["y"]) < 2  # one row: the cells side by side
        screenshot(page, f"incidents-list-{width}")
        top, fourth = table.bounding_box(), rows.nth(min(3, rows.count() - 1)).bounding_box()
        clip = {"x": 0, "y": top["y"], "width": width, "height": fourth["y"] + fourth["height"] - top["y"]}
        page.screenshot(path=str(SCREENSHOTS / f"incidents-list-rows-{width}.png"), clip=clip, full_page=True)
    finally:
        context.close()

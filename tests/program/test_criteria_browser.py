"""A lead keeps a gate's criteria up to date in the real Chromium: add, edit, delete, and re-pin after a
metric-version transition whose shadow results the gate page showed first."""

from __future__ import annotations

import pytest

from metrics import services as metric_services
from metrics.models import MetricDefinition, Observation
from program.models import Criterion, Gate
from tests.browser import SCREENSHOTS, screenshot, sign_in

GATE = "Serving compute latency 15% better"
METRIC = "inference-latency-compute"
ADDED = "Compute p50 latency no worse on chat"


def shadow_period() -> MetricDefinition:
    """The demo measures a draft v2 of the latency metric beside v1 (program.demo._shadow_period)."""
    v2 = MetricDefinition.objects.get(key=METRIC, version=2)
    assert v2.status == "draft" and Observation.objects.filter(definition=v2).exists()
    return v2


def card(page, name: str):
    return page.locator("li.criterion-line", has=page.locator(f"h3:text-is('{name}')"))


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_lead_adds_edits_deletes_and_repins_criteria(browser, live_server, demo, width):
    from django.contrib.auth.models import User

    gate = Gate.objects.get(phase__program__slug="frontier-rebuild", name=GATE)
    v2 = shadow_period()
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, "lead")
        page.goto(f"/programs/gates/{gate.pk}/")
        shadow = page.locator("p.shadow").first
        assert "Under v2 (draft, not pinned)" in shadow.inner_text()
        shadow.scroll_into_view_if_needed()
        screenshot(page, f"criteria-shadow-{width}")

        # Add
        page.click("summary:has-text('Add criterion')")
        page.fill("#id_new-name", ADDED)
        page.select_option("#id_new-kind", "relative")
        page.fill("#id_new-metric", METRIC)
        page.fill("#id_new-workload", "chat-serving")
        page.select_option("#id_new-statistic", "p50")
        page.fill("#id_new-threshold", "1.0")
        page.click("button:has-text('Add criterion')")
        page.wait_for_selector(f"text=Added “{ADDED}” and evaluated the gate again.")
        added = Criterion.objects.get(gate=gate, name=ADDED)
        assert added.metric.ref == f"{METRIC}@1"
        screenshot(page, f"criteria-added-{width}")

        # Edit in place
        card(page, ADDED).locator("summary:has-text('Edit')").click()
        page.fill(f"#id_c{added.pk}-threshold", "")
        card(page, ADDED).locator("button:has-text('Save changes')").click()
        page.wait_for_selector("text=A measured criterion needs a threshold.")
        screenshot(page, f"criteria-edit-refused-{width}")
        card(page, ADDED).screenshot(path=str(SCREENSHOTS / f"criteria-edit-card-{width}.png"))
        page.fill(f"#id_c{added.pk}-threshold", "0.95")
        card(page, ADDED).locator("button:has-text('Save changes')").click()
        page.wait_for_selector(f"text=Saved “{ADDED}” and evaluated the gate again.")
        added.refresh_from_db()
        assert added.threshold == 0.95

        # Delete, after confirming
        card(page, ADDED).locator("summary:has-text('Delete…')").click()
        assert card(page, ADDED).locator("text=Its results in earlier evaluations go with it").is_visible()
        card(page, ADDED).locator("button:has-text('Delete criterion')").click()
        page.wait_for_selector(f"text=Deleted “{ADDED}” and evaluated the gate again.")
        assert not Criterion.objects.filter(pk=added.pk).exists()
        assert card(page, ADDED).count() == 0

        # v2 becomes active: the gate is stale, and the page says what re-pinning will move.
        metric_services.definition_activate(actor=User.objects.get(username="metrics"), definition=v2)
        gate.refresh_from_db()
        assert gate.stale
        page.goto(f"/programs/gates/{gate.pk}/")
        panel = page.locator(".repin")
        assert f"{METRIC}@1 → {METRIC}@2" in panel.inner_text()
        panel.scroll_into_view_if_needed()
        screenshot(page, f"criteria-stale-{width}")
        page.click("button:has-text('Re-pin to active versions')")
        page.wait_for_selector("text=Re-pinned 1 criterion to the active versions.")
        assert page.locator(".repin").count() == 0
        gate.refresh_from_db()
        assert not gate.stale
        assert {c.metric.ref for c in gate.criteria.select_related("metric")} == {f"{METRIC}@2"}
        screenshot(page, f"criteria-repinned-{width}")
    finally:
        context.close()

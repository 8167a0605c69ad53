"""A lead runs the plan through the pages in the real Chromium: advance with confirmation, re-plan,
record a migration state, and read the timeline — at desktop and phone widths."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.models import Transition
from program.models import Gate, Phase, WorkloadMigration
from tests.browser import SCREENSHOTS, screenshot, sign_in


def _pass_cutover_exit_gate(page) -> None:
    gate = Gate.objects.get(phase__program__slug="frontier-rebuild", phase__kind="cutover", kind="exit")
    page.goto(f"/programs/gates/{gate.pk}/")
    page.check("input[name=decision][value=pass]")
    page.fill("textarea[name=note]", "Both workloads clear the bar on our own data.")
    page.click("button:has-text('Record decision')")
    page.wait_for_selector("[data-testid=verdict] .badge.passed")


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_lead_advances_replans_and_moves_a_workload(browser, live_server, demo, width):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, "lead")
        page.goto("/programs/frontier-rebuild/")
        svg = page.locator("svg.timeline-chart")
        assert svg.is_visible()
        axis = svg.inner_html()
        assert "M1<" in axis and "M14<" in axis and "today" in axis
        assert (
            "ended 9 days late" in axis and "ended 12 days late" in axis
        )  # the demo's slipped PoC and canary
        screenshot(page, f"plan-program-{width}")
        timeline = page.locator("section:has(h2:text('Timeline'))")
        timeline.screenshot(path=str(SCREENSHOTS / f"plan-timeline-{width}.png"))
        box = page.locator(".timeline-scroll").bounding_box()
        assert box["width"] <= width  # the page itself never scrolls sideways; the timeline box does
        assert svg.bounding_box()["width"] >= 860  # and keeps the chart readable inside it

        # Advancing asks first: what completes, the exit gate, planned end vs today, the reason.
        _pass_cutover_exit_gate(page)
        page.goto("/programs/frontier-rebuild/")
        page.click("text=Complete Cutover and advance…")
        page.wait_for_url("**/advance/")
        facts = page.inner_text(".confirm")
        assert "Completes" in facts and "Cutover" in facts and "passed" in facts and "early" in facts
        assert (
            Phase.objects.get(program__slug="frontier-rebuild", kind="cutover").status == "active"
        )  # nothing moved yet
        page.click("button:has-text('Complete Cutover and start Frontier sprint')")
        page.wait_for_selector("[role=alert]:has-text('Say why')")
        screenshot(page, f"plan-advance-confirm-{width}")
        page.fill("textarea[name=reason]", "Cutover finished early: every workload is on the new stack.")
        page.click("button:has-text('Complete Cutover and start Frontier sprint')")
        page.wait_for_selector(".flash-success:has-text('Now in Frontier sprint.')")
        assert Phase.objects.get(program__slug="frontier-rebuild", kind="frontier").status == "active"
        history = page.inner_text("#history")
        assert "Lena Lead advanced Cutover → Frontier sprint: exit gate passed" in history
        assert "Lena Lead passed gate 'New fully surpasses old'" in history

        # Re-plan the frontier sprint's end.
        frontier = Phase.objects.get(program__slug="frontier-rebuild", kind="frontier")
        page.click(f"a[href='/programs/phases/{frontier.pk}/dates/']")
        page.fill("#replan-form textarea[name=reason]", "Sprint needs two more weeks of cluster time.")
        page.fill(
            "#replan-form input[name=planned_end]", (frontier.planned_start - timedelta(days=1)).isoformat()
        )
        page.click("button:has-text('Re-plan Frontier sprint')")
        page.wait_for_selector("#replan-form [role=alert]:has-text('Planned end must not be before')")
        assert page.input_value("#replan-form textarea[name=reason]").startswith("Sprint needs")  # kept
        new_end = frontier.planned_end.replace(day=15)
        page.fill("#replan-form input[name=planned_end]", new_end.isoformat())
        screenshot(page, f"plan-phase-dates-{width}")
        page.click("button:has-text('Re-plan Frontier sprint')")
        page.wait_for_selector(".flash-success:has-text('Re-planned Frontier sprint')")
        assert Phase.objects.get(program__slug="frontier-rebuild", kind="frontier").planned_end == new_end
        assert "Lena Lead re-planned Frontier sprint: end" in page.inner_text("#history")

        # Record a migration state with a reason.
        page.click("text=Record migration states…")
        migration = WorkloadMigration.objects.get(workload__key="llm-pretrain-70b")
        row = page.locator(f"#migration-{migration.pk}")
        row.locator("select").select_option("on_new")
        row.locator("input[name$=reason]").fill("Dual run at parity for three weeks.")
        row.locator("button:has-text('Record')").click()
        page.wait_for_selector(".flash-success:has-text('llm-pretrain-70b is now on new.')")
        screenshot(page, f"plan-migrations-{width}")
        record = Transition.objects.filter(action="state", object_id=migration.pk).latest("id")
        assert record.reason == "Dual run at parity for three weeks."

        page.goto("/programs/frontier-rebuild/")
        assert "Dual run at parity for three weeks." in page.inner_text("#history")
        screenshot(page, f"plan-program-after-{width}")
    finally:
        context.close()


@pytest.mark.browser
def test_engineer_sees_no_plan_forms_and_a_forced_visit_is_refused(page, demo):
    sign_in(page, "engineer")
    page.goto("/programs/frontier-rebuild/")
    assert page.locator("text=Complete Cutover and advance…").count() == 0
    assert page.locator("a.phase-dates-link").count() == 0
    assert page.locator("text=Record migration states…").count() == 1  # engineers record migrations
    # The history is paged: "Older entries" appends the next page in place (htmx).
    before = page.locator("#history li").count()
    page.click("text=Older entries")
    page.locator(f"#history li >> nth={before}").wait_for()
    assert page.url.endswith("/programs/frontier-rebuild/")  # stayed on the page
    assert "Lena Lead created Frontier training stack rebuild" in page.inner_text("#history")
    response = page.goto("/programs/frontier-rebuild/advance/")
    assert response.status == 403
    assert (
        "Only a lead of program 'frontier-rebuild' or a platform admin may advance phases."
        in page.inner_text("main")
    )

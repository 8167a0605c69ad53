"""The program and gate pages in the real Chromium, on the demo program; a lead decides through htmx."""

from __future__ import annotations

import pytest

from program.models import Gate, Phase
from tests.browser import screenshot, sign_in


@pytest.mark.browser
def test_program_page_tells_the_story(page, demo):
    sign_in(page, "viewer")
    page.goto("/programs/")
    screenshot(page, "programs")
    page.click("text=Frontier training stack rebuild")
    page.wait_for_url("**/programs/frontier-rebuild/")
    text = page.inner_text("main")
    assert "Month 11 of 14" in text
    assert "Canary wave" in text and "Canary workload is small" in text
    assert "moved recsys-ranking from on new to rolled back" in text  # migration moves are in the history
    assert (
        page.locator(".tl-gate").count()
        == Gate.objects.filter(phase__program__slug="frontier-rebuild").count()
    )
    screenshot(page, "program")


@pytest.mark.browser
def test_a_program_before_its_start_date_shows_as_not_started(page, demo):
    sign_in(page, "lead")
    page.goto("/programs/")
    assert "starts " in page.inner_text("main") and "not started" in page.inner_text("main")
    page.click("text=Data platform rebuild")
    page.wait_for_url("**/programs/data-platform-rebuild/")
    text = page.inner_text("main")
    assert "Month 0 of 14" in text and "not started" in text
    assert not Phase.objects.filter(program__slug="data-platform-rebuild", status="active").exists()
    assert page.locator("a:has-text('Start now')").count() == 1  # its lead may start it early, with a reason
    screenshot(page, "program-not-started")


@pytest.mark.browser
def test_lead_passes_a_ready_gate_through_the_page(page, demo):
    gate = Gate.objects.get(phase__program__slug="frontier-rebuild", name="New fully surpasses old")
    sign_in(page, "lead")
    page.goto(f"/programs/gates/{gate.pk}/")
    assert "advisory" in page.inner_text("main")
    screenshot(page, "gate-ready")
    page.check("input[name=decision][value=waive]")
    page.click("button:has-text('Record decision')")
    page.wait_for_selector("text=Waiving a gate needs a note")
    page.check("input[name=decision][value=pass]")
    page.fill("textarea[name=note]", "Throughput and scaling both clear the bar.")
    page.click("button:has-text('Record decision')")
    page.wait_for_selector("[data-testid=verdict] .badge.passed")
    gate.refresh_from_db()
    assert gate.status == "passed"
    screenshot(page, "gate-passed")


@pytest.mark.browser
def test_viewer_sees_no_decision_form(page, demo):
    gate = Gate.objects.get(phase__program__slug="frontier-rebuild", name="New fully surpasses old")
    sign_in(page, "viewer")
    page.goto(f"/programs/gates/{gate.pk}/")
    assert page.locator("button:has-text('Record decision')").count() == 0
    assert "Program leads decide gates." in page.inner_text("main")


@pytest.mark.browser
def test_lead_attests_a_manual_criterion_on_the_page(page, demo):
    gate = Gate.objects.get(phase__program__slug="frontier-rebuild", phase__kind="frontier", kind="exit")
    sign_in(page, "lead")
    page.goto(f"/programs/gates/{gate.pk}/")
    page.fill("input[name=link]", "https://wiki.example.com/freeze")
    page.click("button:has-text('Attest')")
    page.wait_for_selector("text=Attested: Freeze list in force for the whole sprint.")
    gate.refresh_from_db()
    assert gate.status == "ready"


def two_pages(browser, live_server, width: int):
    contexts = [
        browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        for _ in range(2)
    ]
    return contexts, [context.new_page() for context in contexts]


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_second_lead_on_a_stale_page_sees_why_and_keeps_the_note(browser, live_server, demo, width):
    gate = Gate.objects.get(phase__program__slug="frontier-rebuild", name="New fully surpasses old")
    note = "Scaling efficiency is borderline at 4k GPUs; failing until the rerun."
    contexts, (first, second) = two_pages(browser, live_server, width)
    try:
        sign_in(first, "lead")
        sign_in(second, "lead2")
        first.goto(f"/programs/gates/{gate.pk}/")
        second.goto(f"/programs/gates/{gate.pk}/")  # both see the form while the gate is ready
        first.check("input[name=decision][value=pass]")
        first.click("button:has-text('Record decision')")
        first.wait_for_selector("[data-testid=verdict] .badge.passed")

        second.check("input[name=decision][value=fail]")
        second.fill("textarea[name=note]", note)
        second.click("button:has-text('Record decision')")
        alert = second.locator("[role=alert]:has-text('Your decision was not recorded.')")
        alert.wait_for()
        assert alert.is_visible()
        assert "was already decided (passed); reopen it first." in alert.inner_text()
        assert second.input_value("textarea[name=note]") == note
        assert second.is_checked("input[name=decision][value=fail]")
        alert.scroll_into_view_if_needed()
        screenshot(second, f"gate-race-refused-{width}")
        gate.refresh_from_db()
        assert gate.status == "passed" and gate.decisions.count() == 1
    finally:
        for context in contexts:
            context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_viewer_forced_to_a_lead_form_gets_the_403_page(browser, live_server, demo, width):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        sign_in(page, "viewer")
        response = page.goto("/programs/new/")
        assert response.status == 403
        assert (
            "Only a program creator (group program-leads) or a platform admin may create programs."
            in page.inner_text("main")
        )
        assert page.locator("input[name=slug]").count() == 0
        screenshot(page, f"forbidden-403-{width}")
    finally:
        context.close()

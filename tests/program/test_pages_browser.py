"""The program and gate pages in the real Chromium, on the demo program; a lead decides through htmx."""

from __future__ import annotations

import pytest

from program.models import Gate
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
    assert "recsys-ranking: state → rolled_back" in text  # migration moves are in the history
    assert page.locator(".tl-gate").count() == Gate.objects.count()
    screenshot(page, "program")


@pytest.mark.browser
def test_lead_passes_a_ready_gate_through_the_page(page, demo):
    gate = Gate.objects.get(name="New fully surpasses old")
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
    page.wait_for_selector("h1 .badge.passed")
    gate.refresh_from_db()
    assert gate.status == "passed"
    screenshot(page, "gate-passed")


@pytest.mark.browser
def test_viewer_sees_no_decision_form(page, demo):
    gate = Gate.objects.get(name="New fully surpasses old")
    sign_in(page, "viewer")
    page.goto(f"/programs/gates/{gate.pk}/")
    assert page.locator("button:has-text('Record decision')").count() == 0
    assert "Program leads decide gates." in page.inner_text("main")


@pytest.mark.browser
def test_lead_attests_a_manual_criterion_on_the_page(page, demo):
    gate = Gate.objects.get(phase__kind="frontier", kind="exit")
    sign_in(page, "lead")
    page.goto(f"/programs/gates/{gate.pk}/")
    page.fill("input[name=link]", "https://wiki.example.com/freeze")
    page.click("button:has-text('Attest')")
    page.wait_for_selector("text=Attested: Freeze list in force for the whole sprint.")
    gate.refresh_from_db()
    assert gate.status == "ready"

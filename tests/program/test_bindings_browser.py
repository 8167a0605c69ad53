"""A lead sets up a program from the template on a registry without its metrics, in real Chromium:
pickers on the new-program page, then binding a slot later on the program page."""

from __future__ import annotations

import pytest

from core.roles import PROGRAM_LEADS
from metrics.models import System, Workload
from program.models import Criterion, Gate
from tests.browser import screenshot, sign_in
from tests.conftest import PASSWORD, make_user
from tests.metrics.factories import definition


@pytest.fixture
def own_registry(transactional_db):
    """Systems and two of the program's own metrics and a workload; none of the template's keys."""
    make_user("lena", PROGRAM_LEADS)
    System.objects.create(key="old-stack", name="Old stack")
    System.objects.create(key="new-stack", name="New stack")
    definition(key="tokens-per-sec", name="Tokens per second", unit="token/s", direction="higher_is_better")
    definition(key="iteration-time", name="Iteration time", unit="ms")
    Workload.objects.create(
        key="bert-finetune", name="BERT fine-tune", size="medium", criticality="peripheral"
    )


@pytest.mark.browser
def test_lead_creates_a_program_with_slot_pickers_and_binds_a_slot_later(page, own_registry):
    sign_in(page, "lena", PASSWORD)
    page.goto("/programs/new/")
    # Nothing suggested exists here: every picker starts on "leave unbound".
    assert page.input_value("select[name=slot_throughput]") == ""
    page.fill("input[name=slug]", "own-rebuild")
    page.fill("input[name=name]", "Our training stack rebuild")
    page.fill("input[name=start_date]", "2026-09-01")
    page.select_option("select[name=baseline]", "old-stack")
    page.select_option("select[name=candidate]", "new-stack")
    page.select_option("select[name=slot_throughput]", "tokens-per-sec")
    page.select_option("select[name=slot_canary_workload]", "bert-finetune")
    screenshot(page, "program-new-slots")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "program-new-slots-390")
    page.set_viewport_size({"width": 1280, "height": 860})
    page.click("button:has-text('Create program')")
    page.wait_for_url("**/programs/own-rebuild/")
    assert "Created Our training stack rebuild from rebuild-14m." in page.inner_text("main")
    panel = page.locator("#bindings")
    assert "tokens-per-sec@1" in panel.inner_text() and "bert-finetune" in panel.inner_text()
    assert Gate.objects.filter(phase__program__slug="own-rebuild", kind="exit").count() == 4

    step_time = panel.locator("li", has_text="step_time")
    step_time.locator("select[name=key]").select_option("iteration-time")
    step_time.locator("button:has-text('Bind')").click()
    page.wait_for_selector("text=Bound step_time to iteration-time@1: 1 criterion updated.")
    assert {c.metric.key for c in Criterion.objects.filter(slot="step_time")} == {"iteration-time"}
    screenshot(page, "program-bindings")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "program-bindings-390")

    gate = Gate.objects.get(phase__program__slug="own-rebuild", phase__kind="cutover", kind="exit")
    page.set_viewport_size({"width": 1280, "height": 860})
    page.goto(f"/programs/gates/{gate.pk}/")
    page.click("button:has-text('Evaluate now')")
    page.wait_for_selector("text=Evaluated just now.")
    text = page.inner_text("main")
    assert "needs a metric (slot scaling_efficiency)" in text
    assert "needs a workload (slot large_workload)" in text
    screenshot(page, "gate-needs-a-metric")

"""A real program from scratch, in real Chromium, without the API: a lead creates it from the
template on a registry that holds only the program's own metrics, the numbers arrive as a script
would push them, and the lead passes each exit gate on that data and advances to the frontier sprint
with no waiver — attesting, evaluating, deciding and advancing on the pages alone."""

from __future__ import annotations

import pytest

from core.roles import PROGRAM_LEADS
from metrics.models import System, Workload
from program.models import Decision, Gate, Phase, Program
from tests.browser import screenshot, sign_in
from tests.conftest import PASSWORD, make_user
from tests.metrics.factories import definition
from tests.program.factories import observe, spread

SLOTS = {
    "slot_throughput": "tokens-per-sec",
    "slot_step_time": "iteration-time",
    "slot_scaling_efficiency": "weak-scaling",
    "slot_canary_workload": "bert-finetune",
    "slot_large_workload": "gpt-pretrain",
}
PHASES = (
    ("poc", "Proof of concept", "Canary"),
    ("canary", "Canary", "Cutover"),
    ("cutover", "Cutover", "Frontier sprint"),
)


@pytest.fixture
def own_registry(transactional_db):
    """Only the program's own systems, metrics and workloads: none of the template's suggested keys."""
    make_user("lena", PROGRAM_LEADS)
    System.objects.create(key="old-stack", name="Old stack")
    System.objects.create(key="new-stack", name="New stack")
    return {
        "throughput": definition(
            key="tokens-per-sec", name="Tokens per second", unit="token/s", direction="higher_is_better"
        ),
        "step_time": definition(key="iteration-time", name="Iteration time", unit="ms", statistic="p50"),
        "scaling": definition(
            key="weak-scaling", name="Weak scaling", unit="dimensionless", direction="higher_is_better"
        ),
        "canary": Workload.objects.create(
            key="bert-finetune", name="BERT fine-tune", size="medium", criticality="peripheral"
        ),
        "large": Workload.objects.create(
            key="gpt-pretrain", name="GPT pre-train", size="large", criticality="core"
        ),
    }


def _push_numbers(own: dict) -> None:
    """What the program's CI pushes: the new stack 20 % faster on both workloads, scaling at 0.95."""
    program = Program.objects.get()
    old, new = program.baseline_system, program.candidate_system
    for workload in (own["canary"], own["large"]):
        observe(own["throughput"], old, workload, spread(100), tag=workload.key)
        observe(own["throughput"], new, workload, spread(120), tag=workload.key)
        observe(own["step_time"], old, workload, spread(800), tag=workload.key)
        observe(own["step_time"], new, workload, spread(700), tag=workload.key)
    observe(own["scaling"], new, own["large"], spread(0.95))


def _pass_exit_gate(page, kind: str) -> None:
    gate = Gate.objects.get(phase__kind=kind, kind="exit")
    page.goto(f"/programs/gates/{gate.pk}/")
    while page.locator("button:has-text('Attest')").count():
        page.locator("button:has-text('Attest')").first.click()
        page.wait_for_selector(".flash-success:has-text('Attested')")
    page.click("button:has-text('Evaluate now')")
    page.wait_for_selector("text=Evaluated just now.")
    page.wait_for_selector(
        "[data-testid=verdict] .badge.ready"
    )  # every required criterion passed on the program's data
    # The evaluation's swap settles (htmx, the page's scripts) before the form is used: a click on a
    # form being replaced is lost. The decision's own answer is then checked, so a refusal names itself.
    page.wait_for_load_state("networkidle")
    page.check("input[name=decision][value=pass]")
    page.fill("textarea[name=note]", f"Passed on our own numbers ({kind}).")
    with page.expect_response(lambda response: response.url.endswith("/decide/")) as answer:
        page.click("button:has-text('Record decision')")
    assert answer.value.status == 200, answer.value.text()[:3000]
    page.wait_for_selector("[data-testid=verdict] .badge.passed")


def _advance(page, current: str, following: str) -> None:
    page.goto("/programs/own-rebuild/")
    page.click(f"text=Complete {current} and advance…")
    page.wait_for_url("**/advance/")
    page.fill("textarea[name=reason]", f"{current} exit gate passed on our own data.")
    page.click(f"button:has-text('Complete {current} and start {following}')")
    page.wait_for_selector(f".flash-success:has-text('Now in {following}.')")


@pytest.mark.browser
def test_a_lead_runs_a_program_from_creation_to_the_frontier_sprint_on_pages(page, own_registry):
    sign_in(page, "lena", PASSWORD)
    page.goto("/programs/new/")
    page.fill("input[name=slug]", "own-rebuild")
    page.fill("input[name=name]", "Our training stack rebuild")
    page.fill("input[name=start_date]", "2026-06-01")
    page.select_option("select[name=baseline]", "old-stack")
    page.select_option("select[name=candidate]", "new-stack")
    for name, key in SLOTS.items():
        page.select_option(f"select[name={name}]", key)
    page.click("button:has-text('Create program')")
    page.wait_for_url("**/programs/own-rebuild/")
    assert "unbound" not in page.locator("#bindings").inner_text()

    _push_numbers(own_registry)
    for kind, current, following in PHASES:
        _pass_exit_gate(page, kind)
        _advance(page, current, following)
        screenshot(page, f"journey-after-{kind}")

    assert Phase.objects.get(kind="frontier").status == "active"
    assert list(Decision.objects.values_list("decision", flat=True)) == ["pass", "pass", "pass"]
    history = page.inner_text("#history")
    assert "advanced Cutover → Frontier sprint: exit gate passed" in history
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "journey-frontier-390")

"""The six journeys of the product, walked in the real Chromium through the pages alone (issue 29's
"Done when"): clicks, form fills and keys, no API and no service call for a step a user takes; the ORM
only checks what the steps left behind. Each journey runs at 1280 × 860 and at 390 × 844; on every page
it visits axe-core finds no serious or critical violation, at 390 px nothing scrolls sideways, and a
screenshot is taken per step (screenshots/journey6-<name>-<width>-<step>.png).

Each journey is one demo clone; the violations of all its pages are reported together at the end, so
a failure lists everything wrong on the walk, not the first page only.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from freeze.models import FreezeException
from incidents.models import Incident
from metrics.models import IngestBatch, Observation
from program.models import Decision, Gate, Phase
from tests.axe import axe_violations
from tests.browser import screenshot, sign_in

VIEWPORTS = {1280: {"width": 1280, "height": 860}, 390: {"width": 390, "height": 844}}
PROGRAM = "frontier-rebuild"
TIME = "%Y-%m-%dT%H:%M"

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("width", list(VIEWPORTS))]


class Walk:
    """One journey's browser page at one width: `look` checks and photographs the page as it stands."""

    def __init__(self, page: Any, name: str, width: int) -> None:
        self.page, self.name, self.width = page, name, width
        self.found: list[str] = []

    def look(self, step: str) -> None:
        page = self.page
        page.wait_for_load_state()
        self.found += [f"[{step}] {line}" for line in axe_violations(page)]
        if self.width == 390:
            scroll = page.evaluate("document.scrollingElement.scrollWidth")
            if scroll > self.width:
                self.found.append(f"[{step}] {page.url} scrolls sideways: {scroll} px wide at 390 px")
        screenshot(page, f"journey6-{self.name}-{self.width}-{step}")

    def nav(self, name: str) -> None:
        """A link of the header's nav; at phone width it sits in the Menu, opened first."""
        if self.width == 390:
            self.page.click("details.nav-menu > summary")
        self.page.click(f"header nav a:has-text('{name}')")

    def sign_out(self) -> None:
        self.page.click("details.account-menu > summary")
        self.page.click("details.account-menu button:has-text('Sign out')")
        self.page.wait_for_load_state()

    def done(self) -> None:
        assert not self.found, (
            f"{len(self.found)} problems on the {self.name} journey at {self.width} px:\n"
            + ("\n".join(self.found))
        )


@pytest.fixture
def walk(browser: Any, live_server: Any, demo: None) -> Iterator[Callable[[str, int], Walk]]:
    contexts = []

    def _open(name: str, width: int) -> Walk:
        context = browser.new_context(base_url=live_server.url, viewport=VIEWPORTS[width])
        contexts.append(context)
        return Walk(context.new_page(), name, width)

    yield _open
    for context in contexts:
        context.close()


def test_1_lead_reviews_a_ready_gate(walk: Callable[[str, int], Walk], width: int) -> None:
    gate = Gate.objects.get(phase__program__slug=PROGRAM, name="New fully surpasses old")
    assert gate.status == "ready"
    w = walk("review", width)
    page = w.page
    sign_in(page, "lead")  # lands on My work
    expect(page.locator("h1")).to_have_text("My work")
    w.look("1-my-work")

    page.locator("#ready-gates").get_by_role("link", name="New fully surpasses old").first.click()
    page.wait_for_url(f"**/programs/gates/{gate.pk}/")
    verdict = page.locator("[data-testid=verdict]")
    expect(verdict).to_contain_text("ready to pass")
    # The verdict sentence is what is read first: above every criterion and its statistics.
    assert verdict.bounding_box()["y"] < page.locator("#criteria-heading").bounding_box()["y"]
    w.look("2-gate-verdict")

    statistics = page.locator("details.statistics").first
    expect(statistics.locator("[data-testid=method]").first).to_be_hidden()
    statistics.locator("summary").click()
    expect(statistics).to_contain_text("×")
    w.look("3-statistics-open")

    page.check("input[name=decision][value=pass]")
    page.fill("textarea[name=note]", "Every workload clears the bar; passing on the frozen evidence.")
    w.look("4-decision-filled")
    page.click("button:has-text('Record decision')")
    page.wait_for_selector("[data-testid=verdict] .badge.passed")
    expect(page.locator("main")).to_contain_text("Evidence frozen at the decision")
    expect(page.locator("main")).to_contain_text("passing on the frozen evidence")
    expect(page.locator("button:has-text('Evaluate now')")).to_have_count(0)
    w.look("5-decided")

    decision = Decision.objects.get(gate=gate)
    assert decision.decision == "pass" and decision.decided_by.username == "lead"
    gate.refresh_from_db()
    assert gate.status == "passed"
    w.done()


def test_2_lead_advances_a_phase(walk: Callable[[str, int], Walk], width: int) -> None:
    exit_gate = Gate.objects.get(phase__program__slug=PROGRAM, phase__kind="cutover", kind="exit")
    to_close = list(
        Gate.objects.filter(phase__program__slug=PROGRAM, phase__kind="cutover", status__in=Gate.UNDECIDED)
        .exclude(pk=exit_gate.pk)
        .values_list("name", flat=True)
    )
    assert to_close
    w = walk("advance", width)
    page = w.page
    sign_in(page, "lead")
    page.goto(f"/programs/{PROGRAM}/")
    w.look("1-program")

    # The exit gate first: the advance page refuses while it is undecided.
    page.locator(".gate-table").get_by_role("link", name=exit_gate.name).first.click()
    page.wait_for_url(f"**/programs/gates/{exit_gate.pk}/")
    page.check("input[name=decision][value=pass]")
    page.fill("textarea[name=note]", "Cutover is stable on every workload.")
    page.click("button:has-text('Record decision')")
    page.wait_for_selector("[data-testid=verdict] .badge.passed")
    w.look("2-exit-gate-passed")

    page.locator("main").get_by_role("link", name=PROGRAM).first.click()
    page.wait_for_url(f"**/programs/{PROGRAM}/")
    page.click("text=Complete Cutover and advance…")
    page.wait_for_url("**/advance/")
    closes = page.locator("[data-testid=closes]")
    for name in to_close:
        expect(closes).to_contain_text(name)
    expect(closes).to_contain_text("not decided — phase completed")
    w.look("3-advance-page")

    page.fill("textarea[name=reason]", "Cutover exit gate passed; the frontier sprint starts.")
    page.click("button:has-text('Complete Cutover and start Frontier sprint')")
    page.wait_for_selector(".flash-success:has-text('Now in Frontier sprint.')")
    w.look("4-advanced")

    assert Phase.objects.get(program__slug=PROGRAM, kind="frontier").status == "active"
    table = page.locator(".gate-table")
    for name in to_close:
        expect(table.locator("tr", has_text=name).locator("td.key")).to_contain_text("closed (not decided)")
    closed = Gate.objects.filter(phase__program__slug=PROGRAM, name__in=to_close)
    assert all(gate.closed for gate in closed)
    w.done()


def test_3_engineer_requests_an_exception_and_two_leads_approve_it(
    walk: Callable[[str, int], Walk], width: int
) -> None:
    title = f"Raise the activation checkpoint ratio ({width} px)"
    w = walk("exception", width)
    page = w.page
    sign_in(page, "engineer")
    w.nav("Freeze list")
    page.wait_for_url("**/freeze/")
    w.look("1-freeze-list")

    page.locator("[data-testid=request-exception]:has-text('for trainer-core')").click()
    page.wait_for_url("**/freeze/exceptions/new/?component=trainer-core*")
    assert page.locator("select[name=component]").input_value() == "trainer-core"
    assert page.locator("select[name=window]").input_value() != ""
    w.look("2-form-prefilled")

    start = (datetime.now(UTC) + timedelta(days=1)).replace(hour=9, minute=0)
    page.fill("input[name=title]", title)
    page.select_option("select[name=risk]", "high")
    page.fill("textarea[name=change]", "activation_checkpoint_ratio 0.5 → 0.75 in trainer config.")
    page.fill("textarea[name=justification]", "The 70B canary runs out of memory on the new nodes.")
    page.fill("textarea[name=rollback_plan]", "Set the ratio back to 0.5; no restart needed.")
    page.fill("input[name=change_starts_at_0]", f"{start:%Y-%m-%d}")
    page.fill("input[name=change_starts_at_1]", "09:00")
    page.fill("input[name=change_ends_at_0]", f"{start:%Y-%m-%d}")
    page.fill("input[name=change_ends_at_1]", "17:00")
    page.click("button:has-text('Save draft')")
    page.wait_for_selector("#flash >> text=Draft saved")
    page.click("button:has-text('Submit for approval')")
    page.wait_for_selector("h1 .badge.submitted")
    ci = page.get_by_test_id("ci-decision")
    expect(ci).not_to_have_text("allowed")
    w.look("3-submitted")
    exception = FreezeException.objects.get(title=title)
    url = f"/freeze/exceptions/{exception.pk}/"

    for number, lead in enumerate(("lead", "lead2"), start=1):
        w.sign_out()
        sign_in(page, lead)
        page.locator("#awaiting").get_by_role("link", name=title).click()
        page.wait_for_url(f"**{url}")
        w.look(f"{3 + number}-{lead}-reviews")
        page.click("#exception-body button:has-text('Approve')")
        page.wait_for_selector("#flash >> text=Approv")

    page.wait_for_selector("h1 .badge.approved")
    expect(ci).to_have_text("allowed")
    w.look("6-approved")
    # A long config name in "What changes" wraps inside its card (it ran past the card at 390 px).
    overflowing = page.eval_on_selector_all(
        "#exception-body dl.kv dd",
        """dds => dds.filter(dd => dd.getBoundingClientRect().right
            > dd.closest('.card').getBoundingClientRect().right - 1).map(dd => dd.textContent.trim())""",
    )
    assert overflowing == []
    exception.refresh_from_db()
    assert exception.status == "approved"
    assert sorted(exception.approvals.values_list("approver__username", flat=True)) == ["lead", "lead2"]
    w.done()


def _rows(run: str, *, bad: bool) -> str:
    """Three throughput rows of llm-finetune-8b per system, near the demo's own (the third candidate row
    `bad`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["metric", "system", "workload", "value", "unit", "observed_at", "run_id"])
    at = (datetime.now(UTC) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for system, values in (("legacy", ["46100", "46600", "47000"]), ("rebuilt", ["60800", "61200", "61000"])):
        for i, value in enumerate(values):
            shown = "fast" if bad and system == "rebuilt" and i == 2 else value
            writer.writerow(
                ["training-throughput", system, "llm-finetune-8b", shown, "token/s", at, f"{run}-{i}"]
            )
    return out.getvalue()


def test_4_metric_owner_uploads_observations_and_reads_the_comparison(
    walk: Callable[[str, int], Walk], width: int
) -> None:
    w = walk("ingest", width)
    page = w.page
    sign_in(page, "metrics")
    page.goto("/metrics/")
    page.locator("main").get_by_role("link", name="Training throughput", exact=True).first.click()
    page.wait_for_url("**/metrics/training-throughput*/")
    w.look("1-metric")

    page.get_by_test_id("upload-link").click()
    page.wait_for_url("**/ingest/")
    w.look("2-ingest")

    before = Observation.objects.filter(definition__key="training-throughput").count()
    page.fill("textarea[name=text]", _rows(f"journey-{width}", bad=True))
    page.click("button:has-text('Preview')")
    expect(page.get_by_test_id("preview-valid")).to_have_text("5 of 6 rows valid")
    expect(page.get_by_test_id("row-errors")).to_contain_text("value 'fast' is not a number")
    expect(page.get_by_test_id("confirm-form")).to_have_count(0)
    w.look("3-preview-errors")

    page.fill("textarea[name=text]", _rows(f"journey-{width}", bad=False))
    page.click("button:has-text('Preview')")
    expect(page.get_by_test_id("preview-valid")).to_have_text("6 of 6 rows valid")
    w.look("4-preview-ok")
    page.click("button:has-text('Store 6 observations')")
    page.wait_for_url("**/metrics/training-throughput*/")
    expect(page.locator(".flash")).to_contain_text("Stored 6 of 6 observations")
    w.look("5-stored")
    assert Observation.objects.filter(definition__key="training-throughput").count() == before + 6
    assert IngestBatch.objects.filter(source="ingest page").count() == 1

    page.locator("main").get_by_role("link", name="llm-finetune-8b").first.click()
    page.wait_for_url("**/metrics/compare/?*workload=llm-finetune-8b*")
    shown = ".chart-narrow" if width == 390 else ".chart-wide"
    chart = page.locator(f"#comparison-chart {shown} svg")
    expect(chart).to_be_visible()
    # The picker shows the metric the link named (it showed the first metric of the list).
    expect(page.locator("select[name=metric]")).to_have_value("training-throughput")
    for legend in ("legacy (baseline)", "rebuilt (candidate)"):
        expect(chart).to_contain_text(legend)
    expect(page.locator(".effect-line")).to_contain_text("% better")
    w.look("6-comparison")
    w.done()


def test_5_engineer_opens_and_resolves_an_incident(walk: Callable[[str, int], Walk], width: int) -> None:
    title = f"Loader stalls on shard 12 ({width} px)"
    opened = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=5)
    w = walk("incident", width)
    page = w.page
    sign_in(page, "engineer")
    page.goto("/incidents/")
    w.look("1-incidents")

    form = page.locator("[data-testid=incident-form]")
    form.locator("input[name=title]").fill(title)
    form.locator("select[name=system]").select_option("rebuilt")
    form.locator("select[name=component]").select_option("dataloader")
    form.locator("select[name=bug_class]").select_option("data-pipeline")
    form.locator("select[name=severity]").select_option("sev2")
    form.locator("input[name=opened_at]").fill(opened.strftime(TIME))
    form.locator("input[name=detected_at]").fill((opened - timedelta(hours=1)).strftime(TIME))  # before
    form.locator("button[type=submit]").click()
    summary = page.locator("[data-testid=error-summary]")
    expect(summary).to_be_visible()
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("Detected at must not be before opened at.")
    assert not Incident.objects.filter(title=title).exists()
    w.look("2-error-summary")

    summary.locator("a[href='#id_detected_at']").click()
    expect(page.locator("#id_detected_at")).to_be_focused()
    page.locator("#id_detected_at").fill((opened + timedelta(minutes=20)).strftime(TIME))
    page.locator("[data-testid=incident-form] button[type=submit]").click()
    page.wait_for_selector(".flash-success")
    expect(page.get_by_test_id("incident-state")).to_have_text("open")
    w.look("3-filed")
    incident = Incident.objects.get(title=title)

    page.click("summary:has-text('Resolve')")
    resolve = page.get_by_test_id("resolve-form")
    mitigated, resolved = opened + timedelta(hours=1), opened + timedelta(hours=2)
    resolve.locator("input[name='resolve-mitigated_at']").fill(mitigated.strftime(TIME))
    resolve.locator("input[name='resolve-resolved_at']").fill(resolved.strftime(TIME))
    w.look("4-resolve-form")
    resolve.locator("button[type=submit]").click()
    page.wait_for_selector(".flash-success")
    expect(page.get_by_test_id("incident-state")).to_have_text("resolved")
    w.look("5-resolved")

    incident.refresh_from_db()
    assert (incident.mitigated_at, incident.resolved_at) == (mitigated, resolved)
    w.done()


def test_6_viewer_searches_and_goes_to_the_freeze_list(walk: Callable[[str, int], Walk], width: int) -> None:
    w = walk("search", width)
    page = w.page
    sign_in(page, "viewer")
    w.look("1-my-work")

    page.locator("h1").click()  # the keys go to the page, not to a field
    page.keyboard.press("/")
    box = page.locator("#site-search-q")
    expect(box).to_be_focused()
    page.keyboard.type("kernels")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search/?q=kernels")
    components = page.get_by_test_id("search-group-components")
    expect(components.get_by_role("link", name="Fused attention kernels")).to_be_visible()
    w.look("2-results")

    components.get_by_role("link", name="Fused attention kernels").click()
    page.wait_for_url("**/freeze/components/kernels/")
    expect(page.get_by_test_id("ci-decision")).to_be_visible()
    w.look("3-component")

    page.locator("h1").click()
    page.keyboard.press("g")
    page.keyboard.press("f")
    page.wait_for_url("**/freeze/")
    expect(page.locator("h1")).to_contain_text("Freeze")
    w.look("4-freeze-list")

    # The private serving program: not among the results, and its page is "not found" to a non-member.
    page.locator("h1").click()
    page.keyboard.press("/")
    page.keyboard.type("serving stack")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search/?q=serving*")
    expect(page.locator("main")).not_to_contain_text("Serving stack rebuild")
    expect(page.locator("main a[href='/programs/serving-rebuild/']")).to_have_count(0)
    w.look("5-serving-not-found")
    response = page.goto("/programs/serving-rebuild/")
    assert response is not None and response.status == 404
    w.look("6-serving-page-404")
    w.done()

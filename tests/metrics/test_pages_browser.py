"""The metric registry, metric page and comparison page in the real Chromium, on the demo data."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import screenshot, sign_in


@pytest.mark.browser
def test_registry_filters_with_htmx_and_metric_page_shows_boundary(page, demo):
    sign_in(page)
    page.goto("/metrics/")
    # The demo's twelve, and the incident log's six (mttr, mttd, incidents-per-week, recurrence rate and
    # effective and program rounds per day).
    assert (
        page.locator("#registry-rows tbody tr").count() == 18
    )  # the demo registry, with the program-rounds and recurrence-rate metrics
    screenshot(page, "metrics-registry")
    page.select_option("select[name=owner_team]", "inference-platform")
    # A locator wait, not wait_for_function: Playwright evaluates string predicates with eval, which the CSP refuses.
    expect(page.locator("#registry-rows tbody tr")).to_have_count(2)
    assert "owner_team=inference-platform" in page.url
    page.click("text=Inference p99 latency (with queueing)")
    page.wait_for_url("**/metrics/inference-latency-e2e/")
    assert "The clock starts when the request arrives at the gateway" in page.inner_text("main")
    assert page.locator("svg.chart").count() >= 1
    screenshot(page, "metric-detail")


@pytest.mark.browser
def test_comparison_page_shows_a_verdict(page, demo):
    sign_in(page)
    page.goto("/metrics/compare/")
    page.select_option("select[name=metric]", "training-throughput")
    page.select_option("select[name=workload]", "llm-finetune-8b")
    page.click("button:has-text('Compare')")
    page.wait_for_selector("#comparison-result .badge")
    assert page.inner_text("#comparison-result .badge") == "better"
    screenshot(page, "comparison")


@pytest.mark.browser
def test_version_history_says_what_changed(page, demo):
    sign_in(page)
    page.goto("/metrics/step-time/")
    text = page.inner_text("main")
    assert "step-time@2 · active" in text
    assert "excludes: data loading and checkpointing → data loading, checkpointing and warmup" in text


@pytest.mark.browser
def test_metric_page_shows_its_prometheus_pull_source(page, demo):
    sign_in(page)
    page.goto("/metrics/step-time/")
    card = page.locator("section[aria-labelledby=pull-sources]")
    expect(card).to_contain_text("rebuilt from http://127.0.0.1:9090 every 60 s")
    expect(card).to_contain_text("disabled")
    card.scroll_into_view_if_needed()
    screenshot(page, "metric-pull-source")
    page.set_viewport_size({"width": 390, "height": 900})
    screenshot(page, "metric-pull-source-390")

"""The comparison page read in the real Chromium at 1280 and 390 px (issue 29): the chart of both
systems with its axes and legend, legible at phone width; the verdict and the effect in words; the
activation of a version without data that asks first, and the previous version's data on offer; the
registry's cards that keep Status at phone width."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from metrics.services import definition_version_create
from tests.browser import SCREENSHOTS, screenshot, sign_in

COMPARE = (
    "/metrics/compare/?metric=training-throughput&baseline=legacy&candidate=rebuilt&workload=llm-finetune-8b"
)


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_the_comparison_reads_at_a_glance(page, demo, width):
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page)
    page.goto(COMPARE + "&statistic=p95")
    shown, hidden = (".chart-narrow", ".chart-wide") if width == 390 else (".chart-wide", ".chart-narrow")
    chart = page.locator(f"#comparison-chart {shown} svg")
    expect(chart).to_be_visible()
    expect(page.locator(f"#comparison-chart {hidden} svg")).to_be_hidden()
    for text in ("legacy (baseline)", "rebuilt (candidate)", "time (UTC)", "token/s"):
        expect(chart).to_contain_text(text)
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    # Legible: the tick labels render at 9 px or more on screen at either width.
    tick = chart.locator("text.tick").first
    assert tick.bounding_box()["height"] >= 9
    expect(page.locator(".effect-line")).to_contain_text("Candidate")
    expect(page.locator(".effect-line")).to_contain_text("% better")
    expect(page.locator("#comparison-verdict")).to_have_text("better")
    details = page.locator("#effect-details")
    expect(details.locator("dl")).to_be_hidden()  # folded until asked for
    screenshot(page, f"comparison-readable-{width}")
    chart.screenshot(path=str(SCREENSHOTS / f"comparison-chart-{width}.png"))  # the chart alone, to read
    details.locator("summary").click()
    expect(details).to_contain_text("×")
    expect(details).to_contain_text("MOVER: combines the two sides' intervals")
    screenshot(page, f"comparison-readable-details-{width}")

    # A window of two days: a point per hour, the hours on the time axis.
    since = (timezone.now() - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    page.goto(COMPARE + "&statistic=p50&since=" + since)
    hourly = page.locator(f"#comparison-chart {shown} svg")
    expect(hourly).to_contain_text("p50 per hour, token/s")
    hourly.screenshot(path=str(SCREENSHOTS / f"comparison-chart-hourly-{width}.png"))

    # Too few observations: the badge says how many of how many.
    page.goto(COMPARE + "&statistic=p99&since=" + "2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z")
    expect(page.locator("#comparison-verdict")).to_have_text(
        "not enough data: 0 of 368 needed for a p99 interval"
    )


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_activating_an_empty_version_asks_first_and_the_comparison_offers_the_previous(page, demo, width):
    definition_version_create(
        actor=User.objects.get(username="metrics"),
        key="training-throughput",
        changes={"excludes": ["warmup"]},
    )
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, "metrics")
    page.goto("/metrics/training-throughput@2/activate/")
    warning = page.locator("#empty-version-warning")
    expect(warning).to_contain_text(
        "the comparison page will be empty until data arrives for training-throughput@2"
    )
    screenshot(page, f"activate-empty-version-{width}")
    page.click("button:has-text('Activate training-throughput@2 with no data')")  # the browser wants the tick
    expect(page.locator("h1")).to_contain_text("Activate training-throughput@2?")
    page.check("input[name=confirm_empty]")
    page.click("button:has-text('Activate training-throughput@2 with no data')")
    page.wait_for_url("**/metrics/training-throughput@2/")
    expect(page.locator(".flash")).to_contain_text("the comparison page is empty until they arrive")

    page.goto(COMPARE)
    offer = page.locator("#previous-version-offer")
    expect(offer).to_contain_text("training-throughput@2 has no observations yet for legacy and rebuilt")
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # the long badge wraps
    screenshot(page, f"comparison-previous-offer-{width}")
    offer.locator("a").click()
    page.wait_for_url("**metric=training-throughput%401**")
    expect(page.locator("#previous-version-offer")).to_have_count(0)
    expect(page.locator("#comparison-chart svg:visible")).to_contain_text("legacy (baseline)")


@pytest.mark.browser
def test_the_registry_keeps_status_at_phone_width(page, demo):
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page)
    page.goto("/metrics/")
    status = page.locator("table.registry-table td.key").first
    expect(status).to_be_visible()
    box = status.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    name = page.locator("table.registry-table td[data-label=Metric]").first.bounding_box()
    assert box["y"] < name["y"] + name["height"] + 40  # right under the name, not below the boundary text
    screenshot(page, "registry-cards-390")
    page.locator("table.registry-table tbody tr").first.screenshot(
        path=str(SCREENSHOTS / "registry-card-390.png")
    )
    page.set_viewport_size({"width": 1280, "height": 900})
    expect(page.locator("table.registry-table thead")).to_be_visible()
    screenshot(page, "registry-1280")

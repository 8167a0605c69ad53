"""A metric owner's journey in the real Chromium: register a metric, make a new version of a pinned
one, push shadow data to the draft through the API, activate it; the old version keeps its page."""

from __future__ import annotations

import json
import urllib.request
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser import screenshot, sign_in
from tests.conftest import api_token


def push_shadow_rows(base_url: str, metric: str) -> dict:
    """POST /api/v1/observations/batch/ as the demo's ingest client, with its API token."""
    at = timezone.now() - timedelta(hours=2)
    rows = [
        {
            "metric": metric,
            "system": system,
            "workload": "llm-finetune-8b",
            "value": level * (1 + (i % 7) / 100),
            "unit": "token/s",
            "observed_at": (at + timedelta(minutes=i)).isoformat(),
            "run_id": f"shadow-{system}-{i}",
        }
        for system, level in (("legacy", 40_000), ("rebuilt", 52_000))
        for i in range(40)
    ]
    request = urllib.request.Request(
        f"{base_url}/api/v1/observations/batch/",
        data=json.dumps({"observations": rows}).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Token {api_token(User.objects.get(username='ingest'), 'ingest')}",
        },
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        assert response.status == 201
        return json.loads(response.read())


def at_phone_width(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, name)
    page.set_viewport_size({"width": 1280, "height": 860})


@pytest.mark.browser
def test_register_new_version_shadow_ingest_and_activate(page, demo, live_server):
    sign_in(page, "metrics")

    # Register: a unit pint cannot read is named on its field; then the draft's own page.
    page.goto("/metrics/")
    page.click("text=Register a metric…")
    page.fill("input[name=key]", "serving-ttft")
    page.fill("input[name=name]", "Time to first token")
    page.fill("input[name=unit]", "bananas")
    page.select_option("select[name=direction]", "lower_is_better")
    page.select_option("select[name=statistic]", "p95")
    page.select_option("select[name=sampling]", "per_request")
    page.fill("input[name=start_event]", "the request arrives at the gateway")
    page.fill("input[name=end_event]", "the first token is sent")
    page.check("input[name=includes][value=queueing]")
    page.click("button:has-text('Register as draft')")
    expect(page.locator("#error-unit")).to_contain_text("'bananas' is not a known unit")
    screenshot(page, "metric-register-error")
    page.fill("input[name=unit]", "ms")
    page.click("button:has-text('Register as draft')")
    page.wait_for_url("**/metrics/serving-ttft@1/")
    expect(page.locator(".flash")).to_contain_text("Registered serving-ttft@1 as a draft.")
    screenshot(page, "metric-registered-draft")

    # New version of a metric the demo program's gates pin: preview shows the change and the gates.
    page.goto("/metrics/training-throughput/")
    page.click("text=New version…")
    page.check("input[name=excludes][value=compilation]")
    page.click("button:has-text('Preview changes')")
    expect(page.locator("#preview .changes")).to_contain_text(
        "excludes: warmup, checkpointing and evaluation → warmup, compilation, checkpointing and evaluation"
    )
    assert page.locator("#stale-gates li").count() >= 1
    screenshot(page, "metric-version-preview")
    at_phone_width(page, "metric-version-preview-390")
    page.click("button:has-text('Create training-throughput@2 as a draft')")
    page.wait_for_url("**/metrics/training-throughput@2/")
    expect(page.locator("main")).to_contain_text("No observations for training-throughput@2 yet.")

    # Shadow period: the ingest client names the draft; the draft's page shows only those rows.
    answer = push_shadow_rows(live_server.url, "training-throughput@2")
    assert answer["definitions"] == ["training-throughput@2"]
    page.reload()
    expect(page.locator("main")).to_contain_text("legacy: 40 observations · rebuilt: 40 observations")
    screenshot(page, "metric-draft-shadow-data")

    # Activate: asks first, lists the gates, then says what happened.
    page.click("text=Activate training-throughput@2…")
    expect(page.locator("h1")).to_contain_text("Activate training-throughput@2?")
    assert page.locator("#stale-gates li").count() >= 1
    screenshot(page, "metric-activate-confirm")
    page.click("button:has-text('Activate training-throughput@2')")
    page.wait_for_url("**/metrics/training-throughput@2/")
    expect(page.locator(".flash")).to_contain_text("training-throughput@2 is now the active version")
    expect(page.locator("h1 .badge")).to_have_text("training-throughput@2 · active")

    # The old version keeps its page and its data, one click away in the switcher.
    page.click("nav.versions >> text=training-throughput@1")
    page.wait_for_url("**/metrics/training-throughput@1/")
    expect(page.locator("h1 .badge")).to_have_text("training-throughput@1 · deprecated")
    assert page.locator("svg.chart").count() >= 1
    screenshot(page, "metric-old-version")
    at_phone_width(page, "metric-old-version-390")


@pytest.mark.browser
def test_demo_shows_a_draft_collecting_shadow_data_beside_the_active_version(page, demo):
    sign_in(page)
    page.goto("/metrics/step-time/")
    switcher = page.locator("nav.versions")
    expect(switcher).to_contain_text("step-time@3 draft")
    expect(switcher).to_contain_text("step-time@2 active")
    expect(switcher).to_contain_text("step-time@1 deprecated")
    page.click("nav.versions >> text=step-time@3")
    page.wait_for_url("**/metrics/step-time@3/")
    expect(page.locator("main")).to_contain_text("legacy: 160 observations · rebuilt: 160 observations")
    screenshot(page, "metric-demo-shadow-version")

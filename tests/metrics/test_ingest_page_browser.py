"""A metric owner's journey, finished on pages (issue 29): register a metric, follow the message to
its ingest page, paste rows with a mistake, read the row errors, fix them, confirm; then once more at
phone width with a file. The empty state's snippets are there to copy. Real Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from metrics.models import IngestBatch, Observation
from tests.browser import screenshot, sign_in

KEY = "ckpt-restore-time"
HEADER = "metric,system,workload,value,unit,observed_at,run_id\n"


def rows(run: str, *, bad: bool = False) -> str:
    lines = [
        f"{KEY}@1,legacy,llm-pretrain-70b,95,s,2026-12-01T10:00:00Z,{run}",
        f"{KEY}@1,rebuilt,llm-pretrain-70b,61.5,s,2026-12-01T10:00:00Z,{run}",
        f"{KEY}@1,rebuilt,llm-pretrain-70b,{'fast' if bad else '1.1'},{'min' if not bad else 's'},"
        f"2026-12-01T11:00:00Z,{run}",
    ]
    if bad:
        lines.append(f"{KEY}@1,rebuilt,no-such-workload,60,s,2026-12-01T12:00:00Z,{run}")
    return HEADER + "\n".join(lines) + "\n"


def no_sideways_scroll(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.browser
def test_upload_preview_confirm_at_desktop_and_phone_width(page, demo, tmp_path):
    sign_in(page, "metrics")
    page.goto("/metrics/new/")
    page.fill("input[name=key]", KEY)
    page.fill("input[name=name]", "Checkpoint restore time")
    page.fill("input[name=unit]", "s")
    page.select_option("select[name=direction]", "lower_is_better")
    page.select_option("select[name=statistic]", "p50")
    page.select_option("select[name=sampling]", "per_run")
    page.fill("input[name=start_event]", "the restore is requested")
    page.fill("input[name=end_event]", "the first step after the restore completes")
    page.click("button:has-text('Register as draft')")
    page.wait_for_url(f"**/metrics/{KEY}@1/")
    flash = page.locator(".flash")
    expect(flash).to_contain_text("Upload observations to try it")
    flash.get_by_role("link", name="Upload observations").click()
    page.wait_for_url(f"**/metrics/{KEY}@1/ingest/")

    # The empty state: copyable lines with this site's URL and the metric's real reference.
    expect(page.get_by_test_id("ingest-empty")).to_contain_text(f"{KEY}@1 has no observations yet")
    expect(page.get_by_test_id("snippet-curl-csv")).to_contain_text("/api/v1/observations/batch/")
    expect(page.get_by_test_id("snippet-curl-json")).to_contain_text(f'"metric": "{KEY}@1"')
    # Copy (app.js's data-copy, no inline script under the CSP) puts the real line on the clipboard.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copy = page.locator("button[data-copy='#snippet-curl-csv']")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert "/api/v1/observations/batch/" in page.evaluate("navigator.clipboard.readText()")
    screenshot(page, "ingest-empty-1280")

    # Paste rows with two bad ones: the preview names each by row and field, and stores nothing.
    page.fill("textarea[name=text]", rows("restore-1", bad=True))
    page.click("button:has-text('Preview')")
    expect(page.get_by_test_id("preview-valid")).to_have_text("2 of 4 rows valid")
    errors = page.get_by_test_id("row-errors")
    expect(errors).to_contain_text("value 'fast' is not a number")
    expect(errors).to_contain_text("unknown workload 'no-such-workload'")
    expect(page.get_by_test_id("confirm-form")).to_have_count(0)
    screenshot(page, "ingest-preview-errors-1280")
    assert Observation.objects.filter(definition__key=KEY).count() == 0

    # Fixed in the same box (the pasted text came back), previewed again, confirmed once.
    page.fill("textarea[name=text]", rows("restore-1"))
    page.click("button:has-text('Preview')")
    expect(page.get_by_test_id("preview-valid")).to_have_text("3 of 3 rows valid")
    expect(page.get_by_test_id("first-rows")).to_contain_text("min")  # read as sent; stored in s
    screenshot(page, "ingest-preview-ok-1280")
    page.click("button:has-text('Store 3 observations')")
    page.wait_for_url(f"**/metrics/{KEY}@1/")
    expect(page.locator(".flash")).to_contain_text("Stored 3 of 3 observations")
    screenshot(page, "ingest-stored-1280")
    assert Observation.objects.filter(definition__key=KEY).count() == 3

    # A reload of the confirmation (back, then resubmit) stores nothing twice.
    page.go_back()
    page.wait_for_load_state()
    if page.get_by_role("button", name="Store 3 observations").count():
        page.get_by_role("button", name="Store 3 observations").click()
        page.wait_for_url(f"**/metrics/{KEY}@1/")
        expect(page.locator(".flash")).to_contain_text("already stored")
    assert Observation.objects.filter(definition__key=KEY).count() == 3
    assert IngestBatch.objects.filter(source="ingest page").count() == 1

    # Phone width: the same walk with a file; no sideways scrolling anywhere on the way.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/metrics/{KEY}@1/ingest/")
    no_sideways_scroll(page)
    screenshot(page, "ingest-page-390")
    bad_file = tmp_path / "restore-2.csv"
    bad_file.write_text(rows("restore-2", bad=True))
    page.set_input_files("input[name=file]", str(bad_file))
    page.click("button:has-text('Preview')")
    expect(page.get_by_test_id("preview-valid")).to_have_text("2 of 4 rows valid")
    no_sideways_scroll(page)
    screenshot(page, "ingest-preview-errors-390")
    good_file = tmp_path / "restore-2-fixed.csv"
    good_file.write_text(rows("restore-2"))
    page.set_input_files("input[name=file]", str(good_file))
    page.click("button:has-text('Preview')")
    expect(page.get_by_test_id("preview-valid")).to_have_text("3 of 3 rows valid")
    no_sideways_scroll(page)
    screenshot(page, "ingest-preview-ok-390")
    page.click("button:has-text('Store 3 observations')")
    page.wait_for_url(f"**/metrics/{KEY}@1/")
    expect(page.locator(".flash")).to_contain_text("Stored 3 of 3 observations")
    screenshot(page, "ingest-stored-390")
    assert Observation.objects.filter(definition__key=KEY).count() == 6

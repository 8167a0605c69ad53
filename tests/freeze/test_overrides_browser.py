"""A lead opens a break-glass override on the freeze page and another lead reviews it, in Chromium,
at desktop width and at 390 px."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from freeze.models import FreezeOverride
from tests.browser import SCREENSHOTS, screenshot, sign_in


def panel_screenshot(page, name: str) -> None:
    """The panel alone: a full 390 px page is too tall to read once scaled down."""
    SCREENSHOTS.mkdir(exist_ok=True)
    page.locator("#overrides").screenshot(path=str(SCREENSHOTS / f"{name}.png"))


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_lead_opens_and_another_lead_reviews_an_override(browser, live_server, demo, width):
    contexts = [
        browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
        for _ in range(2)
    ]
    try:
        open_then_review(*(context.new_page() for context in contexts), width)
    finally:
        for context in contexts:
            context.close()


def open_then_review(opener, reviewer, width: int) -> None:
    sign_in(opener, "lead")
    opener.goto("/freeze/")
    panel = opener.locator("#overrides")
    assert "You opened it: another program lead reviews it." in panel.inner_text()  # the demo's
    opener.click("summary:has-text('Open break-glass override')")
    opener.select_option("#overrides select[name=component]", "ib-fabric")
    opener.fill("#overrides textarea[name=reason]", "Fabric link flapping; pushing the vendor's fix.")
    end = timezone.now() + timedelta(hours=3)
    opener.fill("#overrides input[name=ends_at_0]", end.strftime("%Y-%m-%d"))
    opener.fill("#overrides input[name=ends_at_1]", end.strftime("%H:%M"))
    screenshot(opener, f"override-open-form-{width}")
    panel_screenshot(opener, f"override-open-form-panel-{width}")
    opener.click("#overrides button:has-text('Open override')")
    opener.wait_for_selector(".flash-success")
    override = FreezeOverride.objects.get(component__key="ib-fabric")
    assert f"Override #{override.pk} opened" in opener.inner_text(".flash")
    assert "ib-fabric" in opener.inner_text(f"#override-{override.pk}-live")
    screenshot(opener, f"override-opened-{width}")

    sign_in(reviewer, "lead2")
    reviewer.goto("/freeze/")
    entry = reviewer.locator(f"#override-{override.pk}")
    entry.locator("textarea[name=review_note]").fill("Vendor fix was the right call; link stable since.")
    screenshot(reviewer, f"override-review-form-{width}")
    panel_screenshot(reviewer, f"override-review-form-panel-{width}")
    entry.locator("button:has-text('Record review')").click()
    reviewer.wait_for_selector(".flash-success")
    assert f"Review of override #{override.pk} recorded." in reviewer.inner_text(".flash")
    assert reviewer.locator(f"#override-{override.pk}").count() == 0  # no longer awaiting review
    screenshot(reviewer, f"override-reviewed-{width}")
    override.refresh_from_db()
    assert override.reviewed_by.username == "lead2"
    # Nothing spills sideways at this width.
    scroll = reviewer.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"page is {scroll}px wide at {width}px"

"""The inbox as a to-do list in Chromium (issue 29): the lead's open to-dos come first, grouped, with
dates in words and the exact time on hover; at 1280 and 390 px."""

from __future__ import annotations

import re

import pytest

from tests.browser import screenshot, sign_in


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_the_lead_reads_a_grouped_to_do_list_with_dates_in_words(browser, live_server, demo, width):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, "lead")
        page.goto("/notifications/")
        to_do = page.locator("[data-testid=to-do]")
        assert to_do.is_visible()
        times = page.locator("[data-testid=notice] time")
        assert times.count() > 0
        first = times.first
        assert re.fullmatch(
            r"(today|yesterday) \d\d:\d\d UTC|\d{1,2} [A-Z][a-z]{2}( \d{4})?", first.inner_text()
        )
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", first.get_attribute("title"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(page, f"inbox-to-do-{width}")
    finally:
        context.close()

"""The freeze list at phone width (issue 29): one card per component, the strictest level in view
next to its name, and a prefilled "request an exception" per row for an engineer; the component page
says what CI sees. Real Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import screenshot, sign_in


@pytest.mark.browser
def test_freeze_list_is_cards_at_390_with_the_strictest_level_in_view(page, demo):
    sign_in(page, "engineer")
    page.goto("/freeze/")
    screenshot(page, "freeze-list-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    table = page.get_by_test_id("freeze-table")
    assert table.evaluate("t => t.getBoundingClientRect().width") <= 390
    strictest = page.locator("td.strictest").first
    box = strictest.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    # Right below the component's name, before the window columns.
    name_box = page.locator("tbody th.component-col").first.bounding_box()
    first_window_cell = page.locator("tbody td.level-cell").first.bounding_box()
    assert name_box is not None and first_window_cell is not None
    assert name_box["y"] < box["y"] < first_window_cell["y"]
    expect(page.get_by_test_id("request-exception").first).to_be_visible()
    screenshot(page, "freeze-list-390")

    # The row's action opens the form with the component (and the deciding window) chosen.
    page.get_by_test_id("request-exception").first.click()
    page.wait_for_url("**/freeze/exceptions/new/?component=*")
    assert page.locator("select[name=component]").input_value() != ""
    screenshot(page, "freeze-exception-prefilled-390")

    # What CI sees on the component page.
    page.goto("/freeze/components/kernels/")
    expect(page.get_by_test_id("ci-decision")).to_be_visible()
    expect(page.get_by_test_id("ci-curl")).to_contain_text("/api/v1/freeze/check/?component=kernels")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "freeze-component-ci-390")
    page.set_viewport_size({"width": 1280, "height": 860})
    screenshot(page, "freeze-component-ci-1280")

"""The login page in the real Chromium (Debian's package, driven by Playwright)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import screenshot
from tests.conftest import PASSWORD


@pytest.mark.browser
def test_demo_user_signs_in_through_the_login_page(page, viewer):
    page.goto("/programs/")
    assert "/login/" in page.url
    page.fill("input[name=username]", "viewer")
    page.fill("input[name=password]", PASSWORD)
    screenshot(page, "login")
    page.click("button[type=submit]")
    page.wait_for_url("**/programs/")
    assert page.locator("h1").inner_text() == "Programs"
    assert page.locator("nav.nav").inner_text().split() == [
        "My",
        "work",
        "Programs",
        "Freeze",
        "list",
        "Metrics",
        "Incidents",
    ]


@pytest.mark.browser
def test_wrong_password_shows_an_error(page, viewer):
    page.goto("/login/")
    page.fill("input[name=username]", "viewer")
    page.fill("input[name=password]", "not-it")
    page.click("button[type=submit]")
    # The click starts a navigation: wait for the answer's alert rather than look at the page it leaves.
    expect(page.locator("[role=alert]")).to_be_visible()

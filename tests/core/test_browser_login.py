"""The login page in the real Chromium (Debian's package, driven by Playwright)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import PASSWORD

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("Chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    # Playwright runs an event loop in this thread; Django's ORM calls from the test are still sync.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    yield page
    context.close()


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


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
    assert page.locator("nav.nav").inner_text().split() == ["Programs", "Freeze", "list", "Metrics"]


@pytest.mark.browser
def test_wrong_password_shows_an_error(page, viewer):
    page.goto("/login/")
    page.fill("input[name=username]", "viewer")
    page.fill("input[name=password]", "not-it")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").is_visible()

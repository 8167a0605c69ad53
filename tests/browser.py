"""Real-Chromium fixtures (Debian's package, driven by Playwright), loaded as a pytest plugin."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from core.demo import DEMO_PASSWORD
from tests.system_packages import require_program

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "screenshots"
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
    executable = require_program("chromium", package="chromium", path=CHROMIUM)
    from playwright.sync_api import sync_playwright

    # Playwright keeps an event loop in this thread; the tests' ORM calls are still synchronous.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    yield page
    context.close()


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.fixture
def demo(transactional_db):
    """The full demo (metrics, program, freeze), committed so the live server sees it."""
    call_command("load_demo", stdout=io.StringIO())


def sign_in(page, username: str = "viewer", password: str = DEMO_PASSWORD) -> None:
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()

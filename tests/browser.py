"""Real-Chromium fixtures (Debian's package, driven by Playwright), loaded as a pytest plugin."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection, connections
from psycopg import sql

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


def _maintenance_connection() -> psycopg.Connection[tuple[object, ...]]:
    """A connection to the server's `postgres` database, from which test databases are dropped and
    cloned (a database cannot be dropped or copied while anyone, this process included, is in it)."""
    db = connection.settings_dict
    return psycopg.connect(
        dbname="postgres",
        user=db["USER"] or None,
        password=db["PASSWORD"] or None,
        host=db["HOST"] or db["OPTIONS"].get("host") or None,
        port=db["PORT"] or db["OPTIONS"].get("port") or None,
        autocommit=True,
    )


def _until(condition: Callable[[], bool], *, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _empty(admin: psycopg.Connection[tuple[object, ...]], database: str) -> None:
    """CREATE DATABASE … TEMPLATE refuses a template anyone is in. Connections this process closed
    still count for the milliseconds their server processes take to exit; what is left after that is
    held by an idle thread of this process (the live server's thread keeps the connection it opened
    as it started and never uses it again), so it is ended."""
    others = "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"

    def nobody_in() -> bool:
        row = admin.execute(f"SELECT count(*) {others}", [database]).fetchone()
        return not (row and row[0])

    if not _until(nobody_in, seconds=2):
        admin.execute(f"SELECT pg_terminate_backend(pid) {others}", [database])
        _until(nobody_in, seconds=10)  # anyone still in: CREATE DATABASE below says so


def _close_every_connection() -> None:
    """This process's connections, pooled ones too (config/settings/base.py keeps a pool per process):
    an idle pooled connection is still a session in the database."""
    for wrapper in connections.all():
        wrapper.close()
        wrapper.close_pool()


def _clone(source: str, target: str) -> None:
    _close_every_connection()
    with _maintenance_connection() as admin:
        _empty(admin, source)
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(target)))
        admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(target), sql.Identifier(source))
        )


@pytest.fixture(scope="session")
def demo_template(django_db_setup, django_db_blocker):
    """The demo loaded once per session (per xdist worker) into a database of its own.

    Loading it takes about 9 s; cloning the 25 MB database it fills takes under 0.1 s, so each
    browser test starts from a copy instead of loading it again.
    """
    test_database = connection.settings_dict["NAME"]
    template = f"{test_database}_demo"
    with django_db_blocker.unblock():
        _clone(test_database, template)
        connection.settings_dict["NAME"] = template
        try:
            call_command("load_demo", stdout=io.StringIO())
        finally:
            _close_every_connection()
            connection.settings_dict["NAME"] = test_database
    yield template
    with django_db_blocker.unblock(), _maintenance_connection() as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(template)))


@pytest.fixture
def demo(transactional_db, demo_template):
    """The full demo (metrics, program, freeze), committed so the live server sees it: the test
    database is replaced by a clone of the session's demo template (transactional_db's flush empties
    it again afterwards, as after any transactional test)."""
    _clone(demo_template, connection.settings_dict["NAME"])


def sign_in(page, username: str = "viewer", password: str = DEMO_PASSWORD) -> None:
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()

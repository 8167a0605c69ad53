"""Shared fixtures: one user per role plus an outsider, API clients, and the real Celery worker."""

from __future__ import annotations

import os
import time
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from rest_framework.test import APIClient

from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, PROGRAM_LEADS

pytest_plugins = ["pytester", "tests.system_packages", "tests.browser"]

PASSWORD = "correct-horse-battery"


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty in-process cache: entries cached by an earlier test (whose rows
    were rolled back) must not answer this one's requests, and throttle counts start from zero."""
    from django.core.cache import cache

    cache.clear()


# Markers by what a test needs, set from its fixtures so no test has to remember them: `pytest -m unit`
# runs the quick ones. `make test` runs every kind (CI must).
BROWSER_FIXTURES = {"browser", "page"}
INTEGRATION_FIXTURES = {"celery_worker_real", "faults", "live_server", "receiver", "oidc_provider"}


def pytest_collection_modifyitems(config, items):
    # Deselected, not skipped: a postgresql_only test says why it cannot hold on Citus (docs/scaling.md),
    # and the citus_only ones need a cluster (`make test-citus`).
    other_mode = "postgresql_only" if settings.DATABASE_ENGINE_MODE == "citus" else "citus_only"
    if elsewhere := [item for item in items if item.get_closest_marker(other_mode)]:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = [item for item in items if not item.get_closest_marker(other_mode)]
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        elif fixtures & INTEGRATION_FIXTURES or item.get_closest_marker("services"):
            item.add_marker(pytest.mark.integration)
        elif not item.get_closest_marker("perf"):
            item.add_marker(pytest.mark.unit)


def wait_for(predicate, timeout: float = 20.0) -> bool:
    """Poll until `predicate()` holds (work done by the real worker), at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def subprocess_database_url(*, user: str | None = None) -> str:
    """The test database as a DATABASE_URL for a server or worker subprocess: over TCP, or over the
    socket directory the embedded PostgreSQL of `make test` listens on (its HOST is in OPTIONS)."""
    from django.db import connection

    db = connection.settings_dict
    user = quote(user or db["USER"])
    host = db["HOST"] or db["OPTIONS"].get("host") or "127.0.0.1"
    port = db["PORT"] or db["OPTIONS"].get("port") or ""
    if host.startswith("/"):
        return f"postgres://{user}@/{db['NAME']}?host={quote(host)}" + (f"&port={port}" if port else "")
    return f"postgres://{user}@{host}:{port or 5432}/{db['NAME']}"


def make_user(username: str, *groups: str, perms: tuple[str, ...] = ()) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD, email=f"{username}@example.com")
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


def api_token(user: User, *scopes: str) -> str:
    """A new API token's secret for `user` (scope `full` unless given), made through the service."""
    from core.services.api_tokens import api_token_create

    return api_token_create(actor=user, name="test", scopes=scopes or ("full",)).secret


@pytest.fixture
def lead(db):
    return make_user("lead", PROGRAM_LEADS)


@pytest.fixture
def lead2(db):
    return make_user("lead2", PROGRAM_LEADS)


@pytest.fixture
def engineer(db):
    return make_user("engineer", FRAMEWORK_ENGINEERS)


@pytest.fixture
def metric_owner(db):
    return make_user("metric_owner", METRIC_OWNERS, "data-platform")


@pytest.fixture
def component_owner(db):
    return make_user("component_owner", "training-platform")


@pytest.fixture
def ingest_user(db):
    return make_user("ingest", perms=("metrics.add_observation",))


@pytest.fixture
def viewer(db):
    return make_user("viewer")


@pytest.fixture
def api():
    """An API client; `api.force_authenticate(user)` or the `as_user` helper signs in."""
    return APIClient()


@pytest.fixture
def as_user():
    def _client(user: User) -> APIClient:
        client = APIClient()
        client.force_authenticate(user)
        return client

    return _client


def broker_of_this_worker(url: str) -> str:
    """Under pytest-xdist each worker gets a Redis database of its own (the next after the configured
    one, gw0 first): a worker's real Celery worker must never take a task another worker's test sent,
    which would run against the other worker's test database."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, …
    if not worker.startswith("gw") or not url.startswith("redis"):
        return url
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0) + 1 + int(worker[2:])
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture
def celery_worker_real(transactional_db, monkeypatch):
    """A real Celery worker consuming from the real Redis broker, in a thread of this process.

    It shares the test database (transactional_db), so what the test commits the worker sees.
    Without a broker the test is skipped, unless REQUIRE_SERVICES=1, where it fails instead.
    """
    from celery.contrib.testing.worker import start_worker

    from config.celery import app

    if not settings.CELERY_BROKER_URL:
        if settings.REQUIRE_SERVICES:
            pytest.fail("REQUIRE_SERVICES=1 but CELERY_BROKER_URL is not set")
        pytest.skip("no CELERY_BROKER_URL: `make test` starts an embedded Redis for the real-worker tests")
    broker = broker_of_this_worker(settings.CELERY_BROKER_URL)
    monkeypatch.setenv("CELERY_BROKER_URL", broker)  # Celery prefers the variable to app.conf
    from core import outbox

    monkeypatch.setattr(outbox, "_paused_until", 0.0)  # no pause left by an earlier test's dead broker
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    app.conf.broker_url = broker
    app.conf.result_backend = None
    app._after_fork()  # forget connections pooled to another broker (or database) by an earlier test
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=2, timeout=3)
        app.control.purge()
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            yield app
    finally:
        app.conf.task_always_eager = previous
        app._after_fork()

"""Connection exhaustion against a real threaded gunicorn and a real PostgreSQL connection limit.

The server logs in as a role with CONNECTION LIMIT 2 and runs more threads than that. Other sessions
of the same role can take every slot; the answers must then be 503 with Retry-After, never 500, and
the server must serve again as soon as the slots are free.

Needs what the test database already has here: a superuser connection (to create the role) and trust
authentication (the role has no password), over TCP or the embedded server's socket.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from core.unavailable import RETRY_AFTER_SECONDS, UNAVAILABLE_MESSAGE
from tests.conftest import api_token, subprocess_database_url

pytestmark = pytest.mark.django_db(transaction=True)

CONNECTION_LIMIT = 2
THREADS = 8
REQUESTS = 40
# The machine may be busy: generous bounds on start-up and on one request; the figures are reported.
START_TIMEOUT = 60.0
REQUEST_TIMEOUT = 60.0
RECOVERY_BOUND = 5.0


@pytest.fixture
def limited_role():
    """A login role with CONNECTION LIMIT 2 that may use everything the test user owns."""
    name = f"{connection.settings_dict['NAME']}_limited"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP ROLE IF EXISTS "{name}"')
        cursor.execute(f'CREATE ROLE "{name}" LOGIN CONNECTION LIMIT {CONNECTION_LIMIT}')
        cursor.execute(f'GRANT "{connection.settings_dict["USER"]}" TO "{name}"')
    yield name
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [name])
        cursor.execute(f'DROP ROLE IF EXISTS "{name}"')


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def start_server(limited_role, tmp_path):
    """Starts gunicorn, one worker with 8 threads, connected as the limited role; returns its base URL."""
    started = []

    def start(*, pool_timeout: float) -> str:
        port = _free_port()
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": subprocess_database_url(user=limited_role),
            "DATABASE_POOL_MAX_SIZE": str(CONNECTION_LIMIT),
            "DATABASE_POOL_TIMEOUT": str(pool_timeout),
            "CELERY_BROKER_URL": "",
            "LOG_LEVEL": "WARNING",
        }
        log_path = tmp_path / f"gunicorn-{port}.log"
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", "1", "--threads", str(THREADS), "--timeout", "120"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log_path.open("w"),
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        started.append(process)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            # The login form needs no database, so the pool stays closed until the test's first request.
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/login/", timeout=5).status_code == 200:
                    return base
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.2)

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def credentials(viewer):
    """A token for the API and a session cookie for the pages, committed for the server to read."""
    client = Client()
    client.force_login(viewer)
    return {
        "token": api_token(viewer),
        "session": client.cookies[settings.SESSION_COOKIE_NAME].value,
    }


def _burst(base: str, credentials: dict) -> list[httpx.Response]:
    """REQUESTS concurrent requests, alternating an API call (token) and a page (session)."""

    with ThreadPoolExecutor(REQUESTS) as pool:
        return list(pool.map(lambda index: _request(base, credentials, api=index % 2 == 0), range(REQUESTS)))


def _probe(base: str, credentials: dict) -> list[httpx.Response]:
    return [_request(base, credentials, api=True), _request(base, credentials, api=False)]


def _request(base: str, credentials: dict, *, api: bool) -> httpx.Response:
    if api:
        return httpx.get(f"{base}/api/v1/auth/me/", headers={"Authorization": f"Token {credentials['token']}"},
                         timeout=REQUEST_TIMEOUT)  # fmt: skip
    return httpx.get(f"{base}/programs/", cookies={settings.SESSION_COOKIE_NAME: credentials["session"]},
                     timeout=REQUEST_TIMEOUT)  # fmt: skip


def _statuses(responses: list[httpx.Response]) -> Counter:
    return Counter(response.status_code for response in responses)


def test_more_threads_than_connections_are_all_served(start_server, credentials, limited_role):
    # Before: each thread kept its own persistent connection, so the threads beyond the limit
    # answered 500 on this burst and on every later one. Now the threads share the pool and queue for
    # it; the long pool timeout keeps a busy test machine from turning queueing into 503s.
    server = start_server(pool_timeout=30)
    assert _statuses(_burst(server, credentials)) == Counter({200: REQUESTS})

    # The server drops every pooled connection: checked before reuse, they are replaced, not served.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = %s", [limited_role]
        )
        assert cursor.fetchone()[0] > 0
    assert _statuses(_burst(server, credentials)) == Counter({200: REQUESTS})


def test_exhausted_connections_answer_503_never_500_and_recover(start_server, credentials, limited_role):
    server = start_server(pool_timeout=3)
    holders = [psycopg.connect(subprocess_database_url(user=limited_role)) for _ in range(CONNECTION_LIMIT)]
    try:
        responses = _burst(server, credentials)
    finally:
        for holder in holders:
            holder.close()
    released = time.monotonic()

    statuses = _statuses(responses)
    assert statuses[500] == 0, statuses
    assert set(statuses) <= {200, 503}, statuses
    assert statuses[503] > 0, statuses
    for response in responses:
        if response.status_code != 503:
            continue
        assert response.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
        if response.url.path.startswith("/api/"):
            assert response.json() == {"detail": UNAVAILABLE_MESSAGE, "code": "unavailable", "errors": []}
        else:
            assert response.headers["Content-Type"].startswith("text/html")
            assert UNAVAILABLE_MESSAGE in response.text

    # Recovered: an API call and a page succeed again, one after the other.
    while (probe := _statuses(_probe(server, credentials))) != Counter({200: 2}):
        assert probe[500] == 0, probe
        assert time.monotonic() - released < RECOVERY_BOUND, probe
        time.sleep(0.05)
    recovered = time.monotonic() - released
    after = _statuses(_burst(server, credentials))
    assert after[500] == 0, after
    print(
        f"\n{REQUESTS} concurrent requests, {THREADS} threads, connection limit {CONNECTION_LIMIT} held "
        f"by other sessions: {statuses[200]} × 2xx, {statuses[503]} × 503 (Retry-After: {RETRY_AFTER_SECONDS}), "
        f"0 × 500; served again {recovered:.2f} s after release; next burst {dict(after)}"
    )

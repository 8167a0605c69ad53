"""The token endpoint's throttle and the login lockout key on an address the client cannot forge, and the
throttle counts in the shared Redis cache, so every worker process (here: another process) sees one count.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import environ
import pytest
from django.conf import settings as django_settings
from django.test import RequestFactory

from core.api.throttling import client_ip
from tests.conftest import PASSWORD

TOKEN_URL = "/api/v1/auth/token/"
LIMIT = 30  # TokenLoginThrottle.rate, per minute


def _redis_url() -> str:
    url = os.environ.get("CACHE_URL") or django_settings.CELERY_BROKER_URL
    if not url.startswith("redis"):
        if django_settings.REQUIRE_SERVICES:
            pytest.fail("REQUIRE_SERVICES=1 but neither CACHE_URL nor a Redis CELERY_BROKER_URL is set")
        pytest.skip(
            "no Redis configured (CACHE_URL or CELERY_BROKER_URL): `make test` starts an embedded one"
        )
    return url


@pytest.fixture
def redis_cache_url(settings):
    """The real Redis as the default cache, under a key prefix of this test's own (nothing is flushed)."""
    url = f"{_redis_url()}?KEY_PREFIX=throttle-test-{uuid.uuid4().hex}"
    settings.CACHES = {"default": environ.Env.cache_url_config(url)}
    return url


def _post_token(api, address: str, forwarded_for: str | None = None):
    extra = {"REMOTE_ADDR": address}
    if forwarded_for:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded_for
    # An empty body is refused (400) before any password check, so only the throttle is being counted.
    return api.post(TOKEN_URL, {}, format="json", **extra)


@pytest.mark.django_db
def test_rotated_forwarded_for_still_gets_429_at_the_limit(api, redis_cache_url):
    answers = [_post_token(api, "198.51.100.20", f"203.0.113.{n}").status_code for n in range(LIMIT + 1)]
    assert answers[:LIMIT] == [400] * LIMIT
    assert answers[LIMIT] == 429
    refused = _post_token(api, "198.51.100.20", "192.0.2.99")
    assert refused.status_code == 429
    assert refused.json()["code"] == "throttled"
    # Another client address is counted on its own.
    assert _post_token(api, "198.51.100.21").status_code == 400


def test_forwarded_for_is_read_only_behind_the_configured_number_of_proxies(settings):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    assert client_ip(request) == "10.0.0.5"
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    # Behind one trusted proxy the client is the entry that proxy appended, not what the client wrote.
    assert client_ip(request) == "203.0.113.7"


_FILL_FROM_ANOTHER_PROCESS = """
from django.contrib.auth.models import AnonymousUser
from django.core.cache import caches
from django.test import RequestFactory
from core.api.throttling import TokenLoginThrottle

print(type(caches["default"]).__name__)
for _ in range({limit}):
    request = RequestFactory().post("{url}", REMOTE_ADDR="{address}")
    request.user = AnonymousUser()
    assert TokenLoginThrottle().allow_request(request, None)
print("filled")
"""


@pytest.mark.django_db
def test_a_count_made_by_another_process_under_production_settings_is_seen_here(api, redis_cache_url):
    address = "198.51.100.30"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "testserver",
        "DATABASE_URL": "postgres://nobody@127.0.0.1:1/unused",
        "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
        "CACHE_URL": redis_cache_url,
    }
    script = "import django; django.setup()\n" + _FILL_FROM_ANOTHER_PROCESS.format(
        limit=LIMIT, url=TOKEN_URL, address=address
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=django_settings.BASE_DIR,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["RedisCache", "filled"]
    assert _post_token(api, address).status_code == 429


@pytest.mark.django_db
def test_token_endpoint_locks_out_after_ten_failures_whatever_forwarded_for_says(api, viewer):
    address = "192.0.2.10"
    assert django_settings.AXES_FAILURE_LIMIT == 10
    answers = [
        api.post(
            TOKEN_URL,
            {"username": "viewer", "password": "wrong"},
            format="json",
            REMOTE_ADDR=address,
            HTTP_X_FORWARDED_FOR=f"203.0.113.{n}",
        ).status_code
        for n in range(10)
    ]
    # The tenth failure locks the account for this address, and says so.
    assert answers == [400] * 9 + [429]
    locked = api.post(
        TOKEN_URL,
        {"username": "viewer", "password": PASSWORD},
        format="json",
        REMOTE_ADDR=address,
        HTTP_X_FORWARDED_FOR="203.0.113.200",
    )
    assert locked.status_code == 429
    assert locked.json()["code"] == "locked_out"
    assert "token" not in locked.json()


@pytest.mark.django_db
def test_login_page_locks_out_after_ten_failures_whatever_forwarded_for_says(client, viewer):
    address = "192.0.2.11"
    for n in range(10):
        client.post(
            "/login/",
            {"username": "viewer", "password": "wrong"},
            REMOTE_ADDR=address,
            HTTP_X_FORWARDED_FOR=f"203.0.113.{n}",
        )
    locked = client.post(
        "/login/",
        {"username": "viewer", "password": PASSWORD},
        REMOTE_ADDR=address,
        HTTP_X_FORWARDED_FOR="203.0.113.200",
    )
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session

"""Signing in for a token while the cache (Redis) is down (issue 28): the throttle that counts in the
cache falls back to the database, so the endpoint still answers and still refuses a guessing client.
The cache is a real Redis the test starts and kills (tests/core/faults/harness.py)."""

from __future__ import annotations

import environ
import pytest

from core.api.throttling import TokenLoginThrottle
from tests.conftest import PASSWORD
from tests.core.faults.harness import Redis

TOKEN_URL = "/api/v1/auth/token/"

pytestmark = pytest.mark.services


@pytest.fixture
def cache_down(settings, tmp_path):
    """The default cache on a Redis of the test's own, which is then killed."""
    redis = Redis(tmp_path)
    redis.start_on_a_free_port()
    settings.CACHES = {"default": environ.Env.cache_url_config(f"redis://127.0.0.1:{redis.port}/1")}
    redis.stop()
    yield
    redis.stop()


def _sign_in(api, username: str, password: str, address: str = "198.51.100.40"):
    return api.post(
        TOKEN_URL, {"username": username, "password": password}, format="json", REMOTE_ADDR=address
    )


@pytest.mark.django_db
def test_a_right_password_gets_a_token_with_the_cache_down(api, viewer, cache_down):
    answer = _sign_in(api, "viewer", PASSWORD)
    assert answer.status_code == 200, answer.content
    assert answer.json()["token"]


@pytest.mark.django_db
def test_a_wrong_password_is_refused_and_the_lockout_still_holds_with_the_cache_down(api, viewer, cache_down):
    answers = [_sign_in(api, "viewer", "wrong").status_code for _ in range(10)]
    assert answers == [400] * 9 + [429]  # django-axes keeps its counts in PostgreSQL
    assert _sign_in(api, "viewer", PASSWORD).json()["code"] == "locked_out"


@pytest.mark.django_db
def test_the_throttle_counts_failures_in_the_database_while_the_cache_is_down(api, viewer, cache_down):
    """One address guessing many usernames is stopped at the throttle's rate: by its failed sign-ins
    of the last minute (django-axes' failure log), since the cache's request count is out of reach."""
    limit = TokenLoginThrottle.LIMIT
    answers = [_sign_in(api, f"user{n}", "wrong").status_code for n in range(limit + 1)]
    assert answers[:limit] == [400] * limit
    assert answers[limit] == 429
    refused = _sign_in(api, "viewer", PASSWORD)
    assert refused.status_code == 429 and refused.json()["code"] == "throttled"
    assert _sign_in(api, "viewer", PASSWORD, address="198.51.100.41").status_code == 200

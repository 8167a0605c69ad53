"""The global per-user API rate limit (API_RATE_LIMIT): each user counted on their own, a 429 past the
limit, and no refusal at all while the cache that holds the counts is out of reach."""

from __future__ import annotations

import time

import environ
import pytest
from django.conf import settings as django_settings

from core.api import throttling
from core.api.throttling import UserApiThrottle
from tests.core.test_settings_and_health import run_with_production_settings

URL = "/api/v1/programs/"


@pytest.fixture
def three_a_minute(monkeypatch):
    monkeypatch.setattr(UserApiThrottle, "rate", "3/min", raising=False)
    monkeypatch.setattr(throttling, "_cache_down_until", 0.0)


def test_every_api_view_is_limited_per_user_by_default_generously():
    assert django_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] == [
        "core.api.throttling.UserApiThrottle"
    ]
    assert django_settings.API_RATE_LIMIT == "100/s"


@pytest.mark.django_db
def test_past_the_limit_a_user_gets_429_and_another_user_does_not(as_user, viewer, lead, three_a_minute):
    client = as_user(viewer)
    answers = [client.get(URL).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    refused = client.get(URL)
    assert refused.json()["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0
    assert as_user(lead).get(URL).status_code == 200


@pytest.mark.django_db
def test_with_the_cache_down_nobody_is_throttled_and_nothing_fails(as_user, viewer, settings, three_a_minute):
    # A Redis cache on a port nothing listens on: every cache call fails to connect.
    settings.CACHES = {"default": environ.Env.cache_url_config("redis://127.0.0.1:1/0")}
    client = as_user(viewer)
    started = time.monotonic()
    answers = [client.get(URL).status_code for _ in range(6)]
    assert answers == [200] * 6
    # The first failure pauses the limit in this process: the later requests did not wait on the cache.
    assert throttling._cache_down_until > time.monotonic()
    assert time.monotonic() - started < 5


def test_an_empty_setting_turns_the_limit_off_and_a_wrong_one_stops_the_start_up():
    script = (
        "from config.settings import production as s; print(s.REST_FRAMEWORK['DEFAULT_THROTTLE_CLASSES'])"
    )
    off = run_with_production_settings("-c", script, API_RATE_LIMIT="")
    assert off.returncode == 0, off.stderr
    assert off.stdout.strip() == "[]"
    wrong = run_with_production_settings("-c", script, API_RATE_LIMIT="100 per second")
    assert wrong.returncode != 0
    assert "API_RATE_LIMIT must look like 100/s" in wrong.stderr

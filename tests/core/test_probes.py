"""/livez answers without the database or Redis; /readyz fails on the database only and reports the
broker (core/pages/probes.py); /healthz keeps failing on either (its callers rely on that)."""

from __future__ import annotations

import pytest
from django.test import Client

from core.health import OK
from tests.core.faults.harness import Redis
from tests.core.test_unavailable import database_unreachable


@pytest.fixture
def redis(tmp_path, settings):
    """A real Redis of the test's own as the broker, to stop in the middle of the test."""
    server = Redis(tmp_path)
    server.start_on_a_free_port()
    settings.HEALTH_CHECK_BROKER = True
    settings.CELERY_BROKER_URL = server.url
    yield server
    server.stop()


@pytest.mark.django_db
def test_livez_answers_with_the_database_and_the_broker_down(settings):
    settings.HEALTH_CHECK_BROKER = True
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    client = Client(raise_request_exception=False)
    with database_unreachable():
        response = client.get("/livez")
    assert response.status_code == 200
    assert response.json() == {"status": OK}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_readyz_is_ready_with_the_database_and_reports_the_broker(client, redis):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": OK, "database": OK, "broker": OK}


@pytest.mark.django_db
def test_readyz_stays_ready_when_redis_goes_down_and_says_so(client, redis):
    redis.stop()
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == OK
    assert body["database"] == OK
    assert body["broker"].startswith("error: ")

    healthz = client.get("/healthz")
    assert healthz.status_code == 503, "/healthz still fails on the broker"


@pytest.mark.django_db
def test_readyz_answers_503_when_the_database_is_unreachable():
    client = Client(raise_request_exception=False)
    with database_unreachable():
        response = client.get("/readyz")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response.json()["database"].startswith("error: ")

    assert client.get("/readyz").status_code == 200


PROBED_OVER_HTTP = """
import django
django.setup()
from django.test import Client
client = Client(HTTP_HOST="localhost")
for path in ("/livez", "/version", "/login/"):
    print(path, client.get(path).status_code)
# Prometheus' scrape too (its answer needs the database, so only the exemption is read here).
import re
from django.conf import settings
print("/metrics exempt", any(re.fullmatch(p, "metrics") for p in settings.SECURE_REDIRECT_EXEMPT))
"""


def test_production_answers_probes_over_plain_http_as_localhost_and_redirects_pages():
    # kubelet, the image's HEALTHCHECK and Prometheus come without TLS; "localhost" is the Host the
    # HEALTHCHECK asks for, whatever DJANGO_ALLOWED_HOSTS says. Neither path touches the database.
    from tests.core.test_settings_and_health import run_with_production_settings

    result = run_with_production_settings("-c", PROBED_OVER_HTTP)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["/livez 200", "/version 200", "/login/ 301", "/metrics exempt True"]

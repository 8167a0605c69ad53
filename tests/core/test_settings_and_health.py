import json

import pytest
from django.conf import settings
from django.db import connection


def test_settings_use_postgresql_with_a_pool_of_checked_connections():
    assert connection.vendor == "postgresql"
    assert settings.DATABASES["default"]["OPTIONS"]["pool"]["max_size"] > 0
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


@pytest.mark.django_db
def test_healthz_reports_database_and_broker(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = json.loads(response.content)
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    if settings.CELERY_BROKER_URL:
        assert body["broker"] == "ok"
    else:
        assert body["broker"].startswith("not configured")


@pytest.mark.django_db
def test_healthz_fails_when_broker_unreachable(client, settings):
    settings.HEALTH_CHECK_BROKER = True
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert json.loads(response.content)["broker"].startswith("error")


def test_production_settings_pass_deploy_check(monkeypatch):
    import subprocess
    import sys

    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "x" * 30 + "-dummy-production-secret-for-check-deploy",
        "DJANGO_ALLOWED_HOSTS": "tracker.example.com",
        "DATABASE_URL": "postgres://u:p@db.example.com:5432/tracker",
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        capture_output=True,
        text=True,
        env=env,
        cwd=settings.BASE_DIR,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout

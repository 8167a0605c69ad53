import json
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection, connections
from django.db.backends.postgresql import base as postgresql_base


def test_settings_use_postgresql_with_a_pool_of_checked_connections():
    assert connection.vendor == "postgresql"
    assert settings.DATABASES["default"]["OPTIONS"]["pool"]["max_size"] > 0
    # Django's own backend (in the Citus mode its subclass, which also sets up test databases on the
    # workers), and its check of each connection the pool hands out (an empty query).
    engine = "core.citus" if settings.DATABASE_ENGINE_MODE == "citus" else "django.db.backends.postgresql"
    assert settings.DATABASE_ENGINE_MODE in ("postgresql", "citus")
    assert settings.DATABASES["default"]["ENGINE"] == engine
    assert isinstance(connections["default"], postgresql_base.DatabaseWrapper)
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


PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DJANGO_SECRET_KEY": "x" * 30 + "-dummy-production-secret-for-check-deploy",
    "DJANGO_ALLOWED_HOSTS": "tracker.example.com",
    "DATABASE_URL": "postgres://u:p@db.example.com:5432/tracker",
    "CELERY_BROKER_URL": "redis://redis.example.com:6379/0",
    "CACHE_URL": "redis://redis.example.com:6379/1",
    "PATH": "/usr/bin:/bin",
}


def run_with_production_settings(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in {**PRODUCTION_ENV, **env}.items() if v is not None}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=full_env, cwd=settings.BASE_DIR
    )


def test_production_settings_pass_deploy_check():
    result = run_with_production_settings("manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
    # A management command prints its own answer only: no library banners (axes' "AXES: BEGIN …").
    assert result.stdout.strip() == "System check identified no issues (0 silenced).", result.stdout
    assert "AXES" not in result.stderr, result.stderr


@pytest.mark.parametrize("missing", ["DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"])
def test_production_refuses_to_start_without_a_required_service(missing):
    result = run_with_production_settings("-c", "import config.settings.production", **{missing: None})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert f"Set {missing} in production" in result.stderr


def test_production_uses_the_shared_cache_json_only_api_and_no_forwarded_for():
    script = (
        "from config.settings import production as s;"
        "print(s.CACHES['default']['BACKEND']);"
        "print(s.REST_FRAMEWORK['DEFAULT_RENDERER_CLASSES']);"
        "print(s.REST_FRAMEWORK['NUM_PROXIES'], s.CELERY_TASK_ALWAYS_EAGER)"
    )
    result = run_with_production_settings("-c", script)
    assert result.returncode == 0, result.stderr
    backend, renderers, proxies_and_eager = result.stdout.splitlines()
    assert backend == "django.core.cache.backends.redis.RedisCache"
    assert renderers == "['core.api.renderers.FastJSONRenderer']"
    assert proxies_and_eager == "0 False"


def test_browsable_api_only_in_local_settings():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from config.settings import local as s; print(s.REST_FRAMEWORK['DEFAULT_RENDERER_CLASSES'])",
        ],
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "BrowsableAPIRenderer" in result.stdout


@pytest.mark.django_db
def test_api_answers_json_even_when_a_browser_asks_for_html(as_user, viewer):
    response = as_user(viewer).get(
        "/api/v1/auth/me/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


def test_lock_files_pin_every_declared_dependency():
    """requirements*.lock must be regenerated (`make lock`) whenever pyproject.toml's dependencies change."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def pins(path):
        found = {}
        for line in (settings.BASE_DIR / path).read_text().splitlines():
            if line and not line[0].isspace() and not line.startswith("#") and "==" in line:
                name, version = line.split(" ")[0].split(";")[0].split("==")
                found[canonicalize_name(name)] = version
        return found

    project = tomllib.loads((settings.BASE_DIR / "pyproject.toml").read_text())
    for lock, declared in [
        ("requirements.lock", project["project"]["dependencies"]),
        ("requirements-dev.lock", project["project"]["dependencies"] + project["dependency-groups"]["dev"]),
    ]:
        pinned = pins(lock)
        for spec in map(Requirement, declared):
            name = canonicalize_name(spec.name)
            assert name in pinned, f"{spec.name} is not in {lock}: run `make lock`"
            assert spec.specifier.contains(pinned[name], prereleases=True), (
                f"{lock} pins {spec.name}=={pinned[name]}, outside {spec.specifier}: run `make lock`"
            )

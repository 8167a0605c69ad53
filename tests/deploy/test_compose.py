"""docker/compose.yaml: production by default (no demo, no users), every long-running service restarted
and health-checked, one beat, and Prometheus scraping with METRICS_TOKEN. No compose engine runs here,
so the file is read as compose reads it (YAML merge keys included)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[2] / "docker" / "compose.yaml"
ONE_SHOT = {"migrate", "demo"}


@pytest.fixture(scope="module")
def services() -> dict[str, dict]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def command_of(service: dict) -> str:
    command = service.get("command", "")
    return " ".join(command) if isinstance(command, list) else command


def test_the_default_services_load_no_demo_and_create_no_users(services):
    default = {name: service for name, service in services.items() if not service.get("profiles")}
    for name, service in default.items():
        assert "load_demo" not in command_of(service), name
        assert "createsuperuser" not in command_of(service), name
    assert services["demo"]["profiles"] == ["demo"]
    assert command_of(services["demo"]) == "python manage.py load_demo"
    assert services["demo"]["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}


def test_every_long_running_service_is_restarted_and_health_checked(services):
    for name, service in services.items():
        if name in ONE_SHOT:
            # unless-stopped would run them again after each success.
            assert service["restart"] == "on-failure", name
            continue
        assert service["restart"] == "unless-stopped", name
        test = service["healthcheck"]["test"]
        assert test[0] == "CMD" and len(test) > 1, name


def test_web_is_checked_on_livez_and_workers_and_beat_by_their_liveness_command(services):
    assert "/livez" in " ".join(services["web"]["healthcheck"]["test"])
    for name in ("worker", "worker-notifications"):
        assert services[name]["healthcheck"]["test"] == ["CMD", "python", "manage.py", "liveness", "worker"]
    assert services["beat"]["healthcheck"]["test"] == ["CMD", "python", "manage.py", "liveness", "beat"]


def test_beat_runs_once(services):
    beats = [name for name, service in services.items() if " beat " in f" {command_of(service)} "]
    assert beats == ["beat"]
    assert services["beat"]["deploy"]["replicas"] == 1


def test_prometheus_scrapes_web_with_the_metrics_token():
    compose = yaml.safe_load(COMPOSE.read_text())
    assert compose["services"]["web"]["environment"]["METRICS_TOKEN"].startswith("${METRICS_TOKEN:?")
    scrape = yaml.safe_load(compose["configs"]["prometheus"]["content"])["scrape_configs"][0]
    assert scrape["metrics_path"] == "/metrics"
    assert scrape["authorization"]["credentials"] == "${METRICS_TOKEN}"
    assert scrape["static_configs"][0]["targets"] == ["web:8000"]
    # Prometheus asks for Host "web": the app must allow it.
    assert compose["services"]["web"]["environment"]["DJANGO_ALLOWED_HOSTS"].endswith(",web")

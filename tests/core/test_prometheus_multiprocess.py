"""With PROMETHEUS_MULTIPROC_DIR set (gunicorn workers, Celery workers), /metrics sums every process.

Each process here is a real Python process loading Django, as a gunicorn or Celery worker would: two
count freeze checks, a third answers the scrape and must report their sum."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import subprocess_database_url

COUNT = """
import django; django.setup()
from core.telemetry.instruments import FREEZE_CHECKS
FREEZE_CHECKS.labels(decision="forbidden").inc({n})
"""
SCRAPE = """
import django; django.setup()
from django.test import Client
response = Client().get("/metrics", REMOTE_ADDR="127.0.0.1")
assert response.status_code == 200, response.status_code
print(response.content.decode())
"""


def run(code: str, env: dict) -> str:
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.django_db(transaction=True)
def test_the_scrape_sums_the_values_of_every_worker_process(tmp_path):
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "DATABASE_URL": subprocess_database_url(),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "METRICS_TOKEN": "",
    }
    run(COUNT.format(n=2), env)
    run(COUNT.format(n=3), env)
    assert len(list(tmp_path.glob("counter_*.db"))) == 2  # one file per process
    text = run(SCRAPE, env)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples["rebuild_freeze_checks_total", (("decision", "forbidden"),)] == 5

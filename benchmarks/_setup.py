"""Shared set-up for the benchmark scripts: Django against DATABASE_URL, benchmark reference data, and
gunicorn serving the app for the HTTP benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ.setdefault("DJANGO_DEBUG", "false")
# One process per query (benchmarks/_measure.py): a parallel worker's CPU is gone from /proc when read.
# libpq applies PGOPTIONS to every connection, the gunicorn workers' too (they inherit it).
if "max_parallel_workers_per_gather" not in os.environ.get("PGOPTIONS", ""):
    os.environ["PGOPTIONS"] = (
        f"{os.environ.get('PGOPTIONS', '')} -c max_parallel_workers_per_gather=0".strip()
    )

# In-process requests (Django's test client) are not throttled either: at 10M rows a list page answers
# in a few ms, so the default 100/s limit answered 429 instead of serving what is measured.
os.environ.setdefault("API_RATE_LIMIT", "")

import django  # noqa: E402 - exported for scripts that only need Django set up

django.setup()

import logging  # noqa: E402

logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request drowns the figures

from django.contrib.auth.models import User  # noqa: E402

from core.services.api_tokens import api_token_create  # noqa: E402
from metrics.models import MetricDefinition, System, Workload  # noqa: E402

BENCH_METRIC = "bench-latency"


def reference_data() -> tuple[MetricDefinition, System, System, Workload, str]:
    """Benchmark-only systems, workload, definition and an ingest user's token (created once)."""
    legacy, _ = System.objects.get_or_create(key="bench-legacy", defaults={"name": "bench legacy"})
    rebuilt, _ = System.objects.get_or_create(key="bench-rebuilt", defaults={"name": "bench rebuilt"})
    workload, _ = Workload.objects.get_or_create(
        key="bench-workload", defaults={"name": "bench", "size": "medium", "criticality": "peripheral"}
    )
    definition, _ = MetricDefinition.objects.get_or_create(
        key=BENCH_METRIC,
        version=1,
        defaults={
            "name": "Benchmark latency",
            "unit": "ms",
            "direction": "lower_is_better",
            "statistic": "p95",
            "sampling": "per_request",
            "start_event": "bench request starts",
            "end_event": "bench request ends",
            "owner_team": "bench",
            "status": "active",
        },
    )
    user, _ = User.objects.get_or_create(username="bench-ingest")
    from django.contrib.auth.models import Permission

    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="metrics", codename="add_observation")
    )
    # A new ingest-scoped token each run: a secret is shown once and stored only as a digest.
    token = api_token_create(actor=user, name="benchmark ingest", scopes=["ingest"])
    return definition, legacy, rebuilt, workload, token.secret


def remove_observations(**where) -> None:
    """Delete benchmark observations and leave the table as a fresh load would.

    VACUUM alone does not shrink a B-tree: each run deleting a million rows left the primary key
    bigger (1.4 GB for 1M rows after a dozen runs), and the planner then preferred sequential scans
    for comparisons. REINDEX rebuilds it; it locks the table, so run benchmarks on a database of
    their own.
    """
    from django.db import connection

    from metrics.models import Observation

    Observation.objects.filter(**where).delete()
    with connection.cursor() as cursor:
        cursor.execute("REINDEX TABLE metrics_observation")
        cursor.execute("VACUUM ANALYZE metrics_observation")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def gunicorn_serving(
    settings_module: str,
    *,
    workers: int,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    health_headers: Mapping[str, str] | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """gunicorn serving config.wsgi with `settings_module` on a free port, once /healthz answers 200:
    yields (base URL, the server process) and stops the server on the way out.

    `args` are further gunicorn options, `env` what the server's environment adds to this one's, and
    `health_headers` what the health check must send (production's SSL redirect wants a forwarded proto).
    """
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--workers", str(workers),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning", *args,
         "--env", f"DJANGO_SETTINGS_MODULE={settings_module}"],
        cwd=ROOT,
        # One token drives each benchmark's whole load: the per-user API rate limit would answer 429s
        # instead of serving what is measured, so it is off (API_RATE_LIMIT empty) unless `env` sets it.
        env={**os.environ, "API_RATE_LIMIT": "", "DJANGO_SETTINGS_MODULE": settings_module, **(env or {})},
    )  # fmt: skip
    try:
        _wait_healthy(base, health_headers)
        yield base, server
    finally:
        server.terminate()
        server.wait()


def _wait_healthy(base: str, headers: Mapping[str, str] | None) -> None:
    for _ in range(300):
        try:
            if httpx.get(f"{base}/healthz", headers=headers, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("gunicorn did not start")

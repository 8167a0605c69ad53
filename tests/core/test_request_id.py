"""Every response echoes its request id, and the tasks a request queues log under the same id on the
worker: a real `celery worker` process on our own Redis, logging JSON lines."""

from __future__ import annotations

import json
import uuid

import pytest

from config.celery import app
from core import outbox
from tests.conftest import wait_for
from tests.core.faults.harness import Processes, Redis, ingest_rows
from tests.program.factories import metrics_for_template


@pytest.mark.django_db
def test_a_sensible_upstream_request_id_is_kept_and_echoed(as_user, viewer):
    response = as_user(viewer).get("/api/v1/programs/", HTTP_X_REQUEST_ID="lb-7f3a9c.42")
    assert response.status_code == 200
    assert response["X-Request-ID"] == "lb-7f3a9c.42"


@pytest.mark.django_db
def test_without_an_upstream_id_each_request_gets_a_new_one(client):
    first, second = client.get("/healthz")["X-Request-ID"], client.get("/healthz")["X-Request-ID"]
    assert uuid.UUID(first) and uuid.UUID(second)
    assert first != second


@pytest.mark.django_db
def test_an_upstream_id_that_could_forge_log_lines_is_replaced(client):
    forged = 'x" level=error event="admin password reset'
    echoed = client.get("/healthz", HTTP_X_REQUEST_ID=forged)["X-Request-ID"]
    assert echoed != forged
    assert uuid.UUID(echoed)


@pytest.fixture
def json_worker(transactional_db, tmp_path, monkeypatch):
    """Our own Redis and a real worker process on the test database, logging as production does."""
    monkeypatch.setattr(outbox, "_paused_until", 0.0)
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)  # Celery prefers it to app.conf
    redis = Redis(tmp_path)
    redis.start_on_a_free_port()
    processes = Processes(tmp_path, broker=redis.url)
    processes.env["LOG_FORMAT"] = "json"
    previous = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager = False
    app.conf.broker_url = redis.url
    app._after_fork()
    try:
        worker = processes.worker(concurrency=1)
        yield processes.logs[worker.pid]
    finally:
        processes.stop_all()
        redis.stop()
        app.conf.task_always_eager, app.conf.broker_url = previous
        app._after_fork()


def _records(log) -> list[dict]:
    """The worker's log lines that are JSON objects (its start-up banner is printed, not logged)."""
    records = []
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            records.append(json.loads(line))
    return records


@pytest.mark.services
def test_the_tasks_a_request_queues_log_its_request_id_on_the_worker(json_worker, ingest_user, as_user):
    metrics_for_template()
    request_id = f"ingest-{uuid.uuid4()}"
    response = as_user(ingest_user).post(
        "/api/v1/observations/batch/",
        {"observations": ingest_rows("rid")},
        format="json",
        HTTP_X_REQUEST_ID=request_id,
    )
    assert response.status_code == 201
    assert response["X-Request-ID"] == request_id

    def finished_under_the_request_id() -> bool:
        return any(
            r.get("event") == "task_succeeded" and r.get("request_id") == request_id
            for r in _records(json_worker)
        )

    assert wait_for(finished_under_the_request_id, timeout=30), json_worker.read_text()[-3000:]
    started = [r for r in _records(json_worker) if r.get("event") == "task_started"]
    assert {r["task"] for r in started if r.get("request_id") == request_id} == {
        "metrics.tasks.rollups_refresh"
    }
    # Celery's own lines ("Task … succeeded in …") are JSON too, with the same id while the task runs.
    trace = [r for r in _records(json_worker) if r.get("logger") == "celery.app.trace"]
    assert any(r.get("request_id") == request_id for r in trace), trace

"""Fixtures of the fault tests (their harness is tests/core/faults/harness.py)."""

from __future__ import annotations

import pytest

from config.celery import app
from core import outbox
from tests.core.faults.harness import WORKER_ENV, Processes, Receiver, Redis


@pytest.fixture
def faults(transactional_db, tmp_path, settings, monkeypatch):
    """Our Redis, the worker/beat launcher, and this process publishing to that Redis."""
    for name, value in WORKER_ENV.items():
        if name.startswith("OUTBOX_"):
            setattr(settings, name, int(value))
    monkeypatch.setattr(outbox, "_paused_until", 0.0)  # no pause left from another test
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)  # Celery prefers it to app.conf
    redis = Redis(tmp_path)
    redis.start_on_a_free_port()
    processes = Processes(tmp_path, broker=redis.url)
    previous = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager = False
    app.conf.broker_url = redis.url
    app._after_fork()  # forget pooled connections to another broker
    try:
        yield redis, processes
    finally:
        processes.stop_all()
        redis.stop()
        app.conf.task_always_eager, app.conf.broker_url = previous
        app._after_fork()


@pytest.fixture
def receiver():
    receiver = Receiver(delay=0.3)
    yield receiver
    receiver.close()

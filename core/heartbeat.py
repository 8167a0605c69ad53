"""Liveness of the background processes, from a task beat sends every HEARTBEAT_SECONDS and a worker runs.

A fresh row proves the whole path at once: beat is scheduling, the broker carries the message and a
worker consumes it against the database. /healthz reports it without failing on it, so a load balancer
never takes the web server out because the worker is down.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from core.models import Heartbeat

NAME = "background"
# Missing this many beats in a row means beat or every worker is gone (one late beat is normal).
STALE_AFTER_BEATS = 3


def heartbeat_record(*, worker: str) -> None:
    Heartbeat.objects.update_or_create(name=NAME, defaults={"at": timezone.now(), "worker": worker})


def heartbeat_status() -> str:
    """One line for /healthz and the home page: alive, stale, or never seen (tasks in-process without a
    broker). Always one query, so a page showing it keeps a constant count whatever the configuration."""
    beat = Heartbeat.objects.filter(name=NAME).first()
    if not settings.CELERY_BROKER_URL:
        return "not configured (tasks run in-process, no worker or beat)"
    if beat is None:
        return "waiting for the first heartbeat from beat and a worker"
    age = (timezone.now() - beat.at).total_seconds()
    stale = timedelta(seconds=age) > timedelta(seconds=STALE_AFTER_BEATS * settings.HEARTBEAT_SECONDS)
    state = "stale: worker or beat down" if stale else "ok: worker and beat alive"
    return f"{state}, last heartbeat {beat.at:%Y-%m-%dT%H:%M:%SZ} ({age:.0f} s ago) run by {beat.worker}"

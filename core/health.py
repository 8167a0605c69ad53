"""The checks the probes report (core/pages/probes.py and /healthz): each answers "ok" or "error: <kind>"."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from kombu.connection import Connection

OK = "ok"
BROKER_NOT_CONFIGURED = "not configured (tasks run in-process)"


def database_check() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return f"error: {exc.__class__.__name__}"
    return OK


def broker_check() -> str:
    if not settings.HEALTH_CHECK_BROKER:
        return BROKER_NOT_CONFIGURED
    try:
        # kombu leaves Connection unannotated.
        with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:  # type: ignore[no-untyped-call]
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return f"error: {exc.__class__.__name__}"
    return OK

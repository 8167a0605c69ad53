from __future__ import annotations

from celery import shared_task

from core.outbox import queue_options
from incidents.services.derived import incident_rates_derive as derive

# Celery ships no type information: shared_task is an untyped decorator to mypy.


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def incident_rates_derive() -> int:
    return derive()

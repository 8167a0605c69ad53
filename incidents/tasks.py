from __future__ import annotations

from celery import shared_task

from core.outbox import queue_options
from incidents.services.derived import incident_rates_derive as derive


@shared_task(**queue_options("celery"))
def incident_rates_derive() -> int:
    return derive()

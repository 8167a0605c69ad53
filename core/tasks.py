from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from core.heartbeat import heartbeat_record as record
from core.idempotency import idempotency_records_purge as purge
from core.notifications import DeliveryBusy, DeliveryFailed, delivery_attempt
from core.notifications import notification_digests_send as digests_send
from core.outbox import outbox_sweep as sweep
from core.outbox import queue_options
from core.services.api_tokens import api_tokens_purge as tokens_purge


# Celery ships no type information: shared_task is an untyped decorator to mypy.
@shared_task(  # type: ignore[untyped-decorator]
    bind=True,
    autoretry_for=(DeliveryFailed,),
    retry_backoff=settings.NOTIFICATION_RETRY_BACKOFF,
    retry_backoff_max=3600,
    retry_jitter=False,
    max_retries=settings.NOTIFICATION_MAX_RETRIES,
    **queue_options("notifications"),
)
def notification_deliver(self: Task, delivery_id: str) -> bool:
    try:
        return delivery_attempt(delivery_id=delivery_id)
    except DeliveryBusy as busy:
        # Another attempt holds a live lease: come back when it ends rather than drop this one,
        # since that holder may be dead (its lease then expires and this retry takes over).
        raise self.retry(countdown=busy.seconds_left, max_retries=None) from None


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def outbox_sweep() -> int:
    return sweep()


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def idempotency_records_purge() -> int:
    return purge()


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def api_tokens_purge() -> int:
    return tokens_purge()


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def notification_digests_send() -> int:
    """Sent by beat daily at NOTIFICATION_DIGEST_HOUR; safe to run twice (one digest per user and day)."""
    return digests_send()


@shared_task(bind=True, ignore_result=True, expires=60, **queue_options("celery"))  # type: ignore[untyped-decorator]
def heartbeat_record(self: Task) -> None:
    """Sent by beat every HEARTBEAT_SECONDS; the row it writes shows on /healthz that both processes live.
    Not an outbox task: a lost beat is replaced by the next one, there is nothing to retry."""
    record(worker=self.request.hostname or "")

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from core.notifications import DeliveryFailed, delivery_attempt


@shared_task(
    bind=True,
    autoretry_for=(DeliveryFailed,),
    retry_backoff=settings.NOTIFICATION_RETRY_BACKOFF,
    retry_backoff_max=3600,
    retry_jitter=False,
    max_retries=settings.NOTIFICATION_MAX_RETRIES,
    acks_late=True,
)
def deliver_notification(self, delivery_id: str) -> bool:
    return delivery_attempt(delivery_id=delivery_id)

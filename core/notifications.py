"""Notifications: one service creates them, a Celery task delivers each channel after commit.

Email goes through Django's email backend; webhooks are signed per Standard Webhooks, with the
delivery id as `webhook-id`, so a receiver can drop the rare duplicate a retry after a timeout sends.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import httpx
import orjson
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from core.models import Delivery, Notification, WebhookEndpoint

# A claim older than this belongs to a worker that died mid-delivery and may be taken over.
STALE_CLAIM = timedelta(minutes=5)


class DeliveryFailed(Exception):
    """Raised by a delivery attempt that should be retried."""


def notification_send(
    *,
    event: str,
    subject: str,
    body: str,
    payload: dict[str, Any] | None = None,
    recipients: Iterable[str] = (),
) -> Notification:
    """Create a notification with one delivery per channel; deliveries start after the commit."""
    from core.tasks import deliver_notification

    notification = Notification.objects.create(event=event, subject=subject, body=body, payload=payload or {})
    emails = sorted({address for address in recipients if address})
    deliveries = []
    if emails:
        deliveries.append(
            Delivery(notification=notification, channel=Delivery.Channel.EMAIL, recipients=emails)
        )
    for endpoint in WebhookEndpoint.objects.filter(is_active=True):
        if endpoint.wants(event):
            deliveries.append(
                Delivery(notification=notification, channel=Delivery.Channel.WEBHOOK, endpoint=endpoint)
            )
    Delivery.objects.bulk_create(deliveries)
    for delivery in deliveries:
        transaction.on_commit(lambda delivery_id=str(delivery.id): deliver_notification.delay(delivery_id))
    return notification


def delivery_attempt(*, delivery_id: str) -> bool:
    """Deliver once. Returns False when there is nothing to do (already delivered, or claimed by a
    live attempt): this is what makes a redelivered task message harmless."""
    now = timezone.now()
    claimable = Q(status__in=[Delivery.Status.PENDING, Delivery.Status.FAILED]) | Q(
        status=Delivery.Status.SENDING, claimed_at__lt=now - STALE_CLAIM
    )
    claimed = Delivery.objects.filter(claimable, id=delivery_id).update(
        status=Delivery.Status.SENDING, claimed_at=now, attempts=F("attempts") + 1
    )
    if not claimed:
        return False
    delivery = Delivery.objects.select_related("notification", "endpoint").get(id=delivery_id)
    try:
        if delivery.channel == Delivery.Channel.EMAIL:
            _send_email(delivery)
        else:
            _send_webhook(delivery)
    except Exception as exc:
        Delivery.objects.filter(id=delivery_id).update(
            status=Delivery.Status.FAILED, last_error=str(exc)[:2000]
        )
        raise DeliveryFailed(str(exc)) from exc
    Delivery.objects.filter(id=delivery_id).update(
        status=Delivery.Status.DELIVERED, delivered_at=timezone.now(), last_error=""
    )
    return True


def _send_email(delivery: Delivery) -> None:
    notification = delivery.notification
    send_mail(
        subject=f"[Rebuild Tracker] {notification.subject}",
        message=notification.body,
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=delivery.recipients,
    )


def _send_webhook(delivery: Delivery) -> None:
    notification = delivery.notification
    endpoint = delivery.endpoint
    body = orjson.dumps(
        {"type": notification.event, "subject": notification.subject, "data": notification.payload}
    ).decode()
    sent_at = timezone.now()
    msg_id = f"msg_{delivery.id.hex}"
    headers = {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": Webhook(endpoint.secret).sign(msg_id, sent_at, body),
    }
    response = httpx.post(
        endpoint.url, content=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS
    )
    if response.status_code >= 300:
        raise DeliveryFailed(f"{endpoint.url} answered {response.status_code}")

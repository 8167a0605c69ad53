"""Notifications: one service creates them, a Celery task delivers each channel after commit.

Each delivery is an outbox message written with the notification (core.outbox), so it is sent even
if the broker is down at commit time. An attempt claims its delivery with a lease that outlives the
task's hard time limit: a live lease is left alone (the task comes back when it ends), an expired one
belongs to a killed worker and is taken over.

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
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db.models import F, Q
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from core.models import Delivery, Notification, NotificationReceipt, WebhookEndpoint
from core.outbox import outbox_add


def delivery_lease() -> timedelta:
    """How long a claim holds: past the task's hard time limit, so only a dead attempt's claim expires."""
    return timedelta(seconds=settings.TASK_TIME_LIMITS["notifications"][1] + settings.OUTBOX_LEASE_MARGIN)


class DeliveryFailed(Exception):
    """Raised by a delivery attempt that should be retried."""


class DeliveryBusy(Exception):
    """Another attempt holds a live lease on the delivery; try again once it has run out."""

    def __init__(self, seconds_left: float) -> None:
        super().__init__(f"claimed by another attempt for {seconds_left:.0f} s more")
        self.seconds_left = seconds_left


def notification_send(
    *,
    event: str,
    subject: str,
    body: str,
    link: str = "",
    payload: dict[str, Any] | None = None,
    users: Iterable[User | None] = (),
    recipients: Iterable[str] = (),
) -> Notification:
    """Create a notification with one delivery per channel; deliveries start after the commit.

    `link` is the site-relative path of the object it is about. Each of `users` gets it in their
    in-app inbox (written here, in the caller's transaction, so it appears with the change) and by
    email at their address; `recipients` adds addresses of people without an account."""
    notification = Notification.objects.create(
        event=event, subject=subject, body=body, link=link, payload=payload or {}
    )
    people = {user.pk: user for user in users if user is not None}
    NotificationReceipt.objects.bulk_create(
        NotificationReceipt(notification=notification, user_id=pk) for pk in sorted(people)
    )
    emails = sorted(
        {address for address in recipients if address} | {u.email for u in people.values() if u.email}
    )
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
        outbox_add(task="core.tasks.notification_deliver", args=[str(delivery.id)])
    return notification


def absolute_link(link: str) -> str:
    """The link as people outside a request reach it (emails, webhooks): SITE_URL + path."""
    if not link or "://" in link:
        return link
    return f"{settings.SITE_URL}/{link.lstrip('/')}"


def delivery_attempt(*, delivery_id: str) -> bool:
    """Deliver once. Returns False when it was delivered already, which makes a redelivered task
    message harmless; raises DeliveryBusy while another attempt's lease is live."""
    now = timezone.now()
    lease = delivery_lease()
    claimable = Q(status__in=[Delivery.Status.PENDING, Delivery.Status.FAILED]) | Q(
        status=Delivery.Status.SENDING, claimed_at__lt=now - lease
    )
    claimed = Delivery.objects.filter(claimable, id=delivery_id).update(
        status=Delivery.Status.SENDING, claimed_at=now, attempts=F("attempts") + 1
    )
    if not claimed:
        current = Delivery.objects.filter(id=delivery_id).values("status", "claimed_at").first()
        if current and current["status"] == Delivery.Status.SENDING:
            # The claim sets claimed_at with the status; a row without one waits a whole lease.
            claimed_at = current["claimed_at"] or now
            raise DeliveryBusy(max((claimed_at + lease - now).total_seconds(), 1.0))
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
    message = notification.body
    if notification.link:
        message = f"{message}\n\n{absolute_link(notification.link)}"
    send_mail(
        subject=f"[Rebuild Tracker] {notification.subject}",
        message=message,
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=delivery.recipients,
    )


def _send_webhook(delivery: Delivery) -> None:
    notification = delivery.notification
    endpoint = delivery.endpoint
    if endpoint is None:  # deleting an endpoint deletes its deliveries: only a hand-made row lacks one
        raise DeliveryFailed("a webhook delivery without an endpoint")
    body = orjson.dumps(
        {
            "type": notification.event,
            "subject": notification.subject,
            "link": absolute_link(notification.link),
            "data": notification.payload,
        }
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

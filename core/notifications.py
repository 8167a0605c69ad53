"""Notifications: one service creates them, a Celery task delivers each channel after commit.

Each delivery is an outbox message written with the notification (core.outbox), so it is sent even
if the broker is down at commit time. An attempt claims its delivery with a lease it renews while it
sends (core.leases): a live lease is left alone (the task comes back when it ends), an expired one
belongs to a killed worker and is taken over.

Email goes through Django's email backend; webhooks are signed per Standard Webhooks, with the
delivery id as `webhook-id`, so a receiver can drop the rare duplicate a retry after a timeout sends.
An endpoint in Slack or Teams format gets that chat tool's message instead (core.webhook_bodies), unsigned.

Each user chooses per kind of notice (core.notification_kinds) between in-app only, email and a daily
digest (core.models.NotificationPreference); the in-app receipt is written whatever they chose. The
digest is one email a day per user (`notification_digests_send`, beat at NOTIFICATION_DIGEST_HOUR UTC)
listing the notices of the 24 hours before, delivered like any other email.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import orjson
from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from core.leases import kept_renewed, lease_length
from core.models import (
    Delivery,
    Notification,
    NotificationDigest,
    NotificationPreference,
    NotificationReceipt,
    WebhookEndpoint,
)
from core.notification_kinds import kind_of
from core.outbox import outbox_add
from core.webhook_bodies import Format, Notice, body_for

DIGEST_EVENT = "digest.daily"


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
    program_key: str = "",
) -> Notification:
    """Create a notification with one delivery per channel; deliveries start after the commit.

    `link` is the site-relative path of the object it is about. Each of `users` gets it in their
    in-app inbox (written here, in the caller's transaction, so it appears with the change), and by
    email at their address unless they chose in-app only or the daily digest for its kind;
    `recipients` adds addresses of people without an account. `program_key` names the program it is
    about, so that endpoints scoped to another program do not hear it."""
    notification = Notification.objects.create(
        event=event, subject=subject, body=body, link=link, payload=payload or {}, program_key=program_key
    )
    people = {user.pk: user for user in users if user is not None}
    channels = _channels(people, kind_of(event))
    Channel = NotificationPreference.Channel
    NotificationReceipt.objects.bulk_create(
        NotificationReceipt(notification=notification, user_id=pk, in_digest=channels[pk] == Channel.DIGEST)
        for pk in sorted(people)
    )
    emails = sorted(
        {address for address in recipients if address}
        | {u.email for u in people.values() if u.email and channels[u.pk] == Channel.EMAIL}
    )
    deliveries = []
    if emails:
        deliveries.append(
            Delivery(notification=notification, channel=Delivery.Channel.EMAIL, recipients=emails)
        )
    for endpoint in WebhookEndpoint.objects.filter(is_active=True):
        if endpoint.wants(event, program_key):
            deliveries.append(
                Delivery(notification=notification, channel=Delivery.Channel.WEBHOOK, endpoint=endpoint)
            )
    Delivery.objects.bulk_create(deliveries)
    for delivery in deliveries:
        outbox_add(task="core.tasks.notification_deliver", args=[str(delivery.id)])
    return notification


def _channels(people: dict[int, User], kind: str) -> dict[int, str]:
    """Each person's channel for this kind: their preference, else the default (one query, none for nobody)."""
    chosen: dict[int, str] = {}
    if people:
        chosen = dict(
            NotificationPreference.objects.filter(user_id__in=people, kind=kind).values_list(
                "user_id", "channel"
            )
        )
    return {pk: chosen.get(pk, NotificationPreference.DEFAULT) for pk in people}


def digest_period(now: datetime) -> tuple[datetime, datetime]:
    """The 24 hours a digest sent at `now` covers: up to the latest NOTIFICATION_DIGEST_HOUR:00 UTC not
    after `now`. A late or repeated run therefore covers the same period as the punctual one."""
    now = now.astimezone(UTC)
    end = now.replace(hour=settings.NOTIFICATION_DIGEST_HOUR, minute=0, second=0, microsecond=0)
    if end > now:
        end -= timedelta(days=1)
    return end - timedelta(days=1), end


def notification_digests_send(*, now: datetime | None = None) -> int:
    """Queue one digest email per user owed one for the period ending at the last digest hour; returns
    how many were queued. Each user's digest is one transaction holding its NotificationDigest row
    (unique per user and day): a second run, or a second beat at the same moment (whose insert waits for
    the first's commit, then finds the row), queues nothing again."""
    start, end = digest_period(now or timezone.now())
    owed = (
        NotificationReceipt.objects.filter(
            in_digest=True,
            notification__created_at__gte=start,
            notification__created_at__lt=end,
            user__is_active=True,
        )
        .exclude(user__email="")
        .select_related("notification", "user")
        .order_by("user_id", "notification_id")
    )
    by_user: dict[int, list[NotificationReceipt]] = {}
    for receipt in owed:
        by_user.setdefault(receipt.user_id, []).append(receipt)
    sent = 0
    for receipts in by_user.values():
        sent += _digest_queue(receipts, day=end.date(), start=start)
    return sent


def _digest_queue(receipts: list[NotificationReceipt], *, day: date, start: datetime) -> int:
    user = receipts[0].user
    with transaction.atomic():
        digest, created = NotificationDigest.objects.get_or_create(user=user, day=day)
        if not created:
            return 0
        count = len(receipts)
        lines = [f"{count} notice{'s' if count != 1 else ''} since {start:%Y-%m-%d %H:%M} UTC:", ""]
        for receipt in receipts:
            notice = receipt.notification
            lines.append(f"- {notice.created_at.astimezone(UTC):%H:%M} {notice.subject}")
            if notice.link:
                lines.append(f"  {absolute_link(notice.link)}")
        lines += [
            "",
            "Choose how you hear of each kind of notice:",
            absolute_link(reverse("notification-preferences")),
        ]
        # No receipt and no webhook: the notices themselves are in the inbox already.
        notification = Notification.objects.create(
            event=DIGEST_EVENT,
            subject=f"Daily digest, {day:%Y-%m-%d}: {count} notice{'s' if count != 1 else ''}",
            body="\n".join(lines),
            link=reverse("notifications"),
            payload={
                "user": user.pk,
                "day": day.isoformat(),
                "notices": [r.notification_id for r in receipts],
            },
        )
        digest.notification, digest.notices = notification, count
        digest.save(update_fields=["notification", "notices"])
        delivery = Delivery.objects.create(
            notification=notification, channel=Delivery.Channel.EMAIL, recipients=[user.email]
        )
        outbox_add(task="core.tasks.notification_deliver", args=[str(delivery.id)])
    return 1


def absolute_link(link: str) -> str:
    """The link as people outside a request reach it (emails, webhooks): SITE_URL + path."""
    if not link or "://" in link:
        return link
    return f"{settings.SITE_URL}/{link.lstrip('/')}"


def delivery_attempt(*, delivery_id: str) -> bool:
    """Deliver once. Returns False when it was delivered already, which makes a redelivered task
    message harmless; raises DeliveryBusy while another attempt's lease is live."""
    now = timezone.now()
    lease = lease_length()
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
    renew = Delivery.objects.filter(id=delivery_id, status=Delivery.Status.SENDING)
    try:
        with kept_renewed(lambda: renew.update(claimed_at=timezone.now())):
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
    notice = Notice(
        event=notification.event,
        subject=notification.subject,
        body=notification.body,
        link=absolute_link(notification.link),
        program_key=notification.program_key,
        data=notification.payload,
    )
    body = orjson.dumps(body_for(endpoint.format, notice)).decode()
    headers = {"content-type": "application/json"}
    if endpoint.format == Format.STANDARD:
        sent_at = timezone.now()
        msg_id = f"msg_{delivery.id.hex}"
        headers |= {
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(sent_at.timestamp())),
            "webhook-signature": Webhook(endpoint.secret).sign(msg_id, sent_at, body),
        }
    # Slack and Teams get no signature: they check none (their URL is the credential), and a header
    # that looks like a guarantee nobody verifies is worse than none.
    response = httpx.post(
        endpoint.url, content=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS
    )
    if response.status_code >= 300:
        # Slack's and Teams' paths are their secret: the error, shown in the admin, names the host only.
        where = endpoint.url if endpoint.format == Format.STANDARD else httpx.URL(endpoint.url).host
        raise DeliveryFailed(f"{where} answered {response.status_code}")

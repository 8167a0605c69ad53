"""The in-app inbox: marking notifications read. Read state is personal, so it writes no audit row
(history records what happened to programs and exceptions, not who has seen what).

A notice you acted on is read: a service acting on an object calls `notifications_mark_read_for` with
the object's link, in its own transaction, so the acting user's notices about it turn read with the
change (and stay unread if the change is refused).

A notice that asks for an action is done once the action is taken, by whoever takes it: the service
taking it calls `notices_clear` (deciding a gate clears "ready for review" for every lead it went to),
and, where the people who may act change, keeps only those who still may (`keep_user_ids`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.models import NotificationReceipt

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def receipt_read(*, actor: User, receipt: NotificationReceipt) -> bool:
    """Mark one of the actor's notifications read. False if it was read already. No role: any signed-in
    user, but only in their own inbox. The conditional update makes two clicks at once harmless: the
    first sets read_at, the second changes nothing."""
    if receipt.user_id != actor.pk:
        raise PermissionDenied("This notification is in someone else's inbox.")
    return bool(
        NotificationReceipt.objects.filter(pk=receipt.pk, read_at__isnull=True).update(read_at=timezone.now())
    )


def receipts_read_all(*, actor: User) -> int:
    """Mark every unread notification of the actor read; returns how many were unread. No role: any
    signed-in user, in their own inbox only."""
    return NotificationReceipt.objects.filter(user=actor, read_at__isnull=True).update(read_at=timezone.now())


def notifications_mark_read_for(*, actor: User, link: str) -> int:
    """Mark read the actor's unread notifications about the object at `link` (the site path the notices
    carry, e.g. reverse("incidents:detail", args=[pk])); returns how many. Only the actor's: the others
    told about it have not acted. No role: it is the actor's own inbox."""
    if not link:
        return 0
    now = timezone.now()
    return NotificationReceipt.objects.filter(
        user=actor, read_at__isnull=True, notification__link=link
    ).update(read_at=now, done_at=Coalesce("done_at", now))


def notices_clear(*, link: str, events: Iterable[str], keep_user_ids: Iterable[int] | None = None) -> int:
    """Mark done (and read) the open notices of `events` about the object at `link`, for everyone they
    went to except `keep_user_ids` (those who may still act on them); returns how many. Called by the
    service whose action the notices ask for, in its transaction. No role: the action's own rule
    was checked by the service calling it."""
    if not link:
        return 0
    now = timezone.now()
    receipts = NotificationReceipt.objects.filter(
        done_at__isnull=True, notification__link=link, notification__event__in=list(events)
    )
    if keep_user_ids is not None:
        receipts = receipts.exclude(user_id__in=list(keep_user_ids))
    return receipts.update(done_at=now, read_at=Coalesce("read_at", now))

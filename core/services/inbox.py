"""The in-app inbox: marking notifications read. Read state is personal, so it writes no audit row
(history records what happened to programs and exceptions, not who has seen what)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.utils import timezone

from core.models import NotificationReceipt


def receipt_read(*, user, receipt: NotificationReceipt) -> bool:
    """Mark one of the user's notifications read. False if it was read already. The conditional
    update makes two clicks at once harmless: the first sets read_at, the second changes nothing."""
    if receipt.user_id != user.pk:
        raise PermissionDenied("This notification is in someone else's inbox.")
    return bool(
        NotificationReceipt.objects.filter(pk=receipt.pk, read_at__isnull=True).update(read_at=timezone.now())
    )


def receipts_read_all(*, user) -> int:
    """Mark every unread notification of the user read; returns how many were unread."""
    return NotificationReceipt.objects.filter(user=user, read_at__isnull=True).update(read_at=timezone.now())

"""The inbox as a to-do list: which notices ask for an action, and similar notices grouped under one
line ("3 exceptions awaiting your approval"). Pure grouping over receipts already read in one query."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.models import NotificationReceipt
from core.notification_kinds import kind_of

# Notices that ask their reader to act, with the words for one and for several. Each stays on the
# to-do list until the action is taken (core.services.inbox.notices_clear, called by that service).
TO_DO: dict[str, tuple[str, str]] = {
    "exception.submitted": ("exception awaiting your approval", "exceptions awaiting your approval"),
    "gate.ready": ("gate ready for your review", "gates ready for your review"),
    "override.opened": ("break-glass override to review", "break-glass overrides to review"),
}
# The same notices once done, as the news below the to-do list says them.
DONE: dict[str, tuple[str, str]] = {
    "exception.submitted": ("approval request, done", "approval requests, done"),
    "gate.ready": ("gate review, done", "gate reviews, done"),
    "override.opened": ("override review, done", "override reviews, done"),
}
# News, grouped the same way when several of one kind come together.
NEWS: dict[str, tuple[str, str]] = {
    "gate.decided": ("gate decided", "gates decided"),
    "gate.stale": ("gate went stale", "gates went stale"),
    "exception.decided": ("exception decided", "exceptions decided"),
    "exception.expiring": ("exception expiring soon", "exceptions expiring soon"),
    "exception.expired": ("exception expired", "exceptions expired"),
    "override.reviewed": ("override reviewed", "overrides reviewed"),
    "override.overdue": ("override overdue for review", "overrides overdue for review"),
    "incident.filed": ("incident filed", "incidents filed"),
    "incident.resolved": ("incident resolved", "incidents resolved"),
    "incident.reopened": ("incident reopened", "incidents reopened"),
    "incident.mitigated": ("incident mitigated by its alert", "incidents mitigated by their alerts"),
    "incident.refired": ("incident's alert fired again", "incidents' alerts fired again"),
    "feed.stale": ("metric feed went stale", "metric feeds went stale"),
}


def group_title(event: str, count: int, *, done: bool = False) -> str:
    """How many of what: "3 exceptions awaiting your approval", "3 approval requests, done" once done;
    an event without words of its own says its kind ("2 other notices")."""
    words = (DONE.get(event) if done else None) or TO_DO.get(event) or NEWS.get(event)
    if words is None:
        label = kind_of(event).label.lower().removesuffix(" notices")
        words = (f"{label} notice", f"{label} notices")
    return f"{count} {words[0] if count == 1 else words[1]}"


@dataclass
class NoticeGroup:
    """Notices of one event, newest first; a group of one shows as that notice alone."""

    event: str
    receipts: list[NotificationReceipt] = field(default_factory=list)

    @property
    def title(self) -> str:
        done = all(r.done_at is not None for r in self.receipts)
        return group_title(self.event, len(self.receipts), done=done)

    @property
    def unread(self) -> int:
        return sum(1 for r in self.receipts if r.read_at is None)

    @property
    def first(self) -> NotificationReceipt:
        return self.receipts[0]


def by_event(receipts: Iterable[NotificationReceipt]) -> list[NoticeGroup]:
    """One group per event, in the order each event first appears (the receipts come newest first)."""
    groups: dict[str, NoticeGroup] = {}
    for receipt in receipts:
        event = receipt.notification.event
        groups.setdefault(event, NoticeGroup(event)).receipts.append(receipt)
    return list(groups.values())


def runs_of_event(receipts: Iterable[NotificationReceipt]) -> list[NoticeGroup]:
    """Neighbouring notices of the same event folded together, so a feed stays in time order."""
    groups: list[NoticeGroup] = []
    for receipt in receipts:
        event = receipt.notification.event
        if not groups or groups[-1].event != event:
            groups.append(NoticeGroup(event))
        groups[-1].receipts.append(receipt)
    return groups

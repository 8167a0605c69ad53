"""Break-glass overrides: a program lead lets a component change now, at any level, for at most 24 h;
another lead reviews it with a note within 72 h of opening. Audited; owners and leads are told."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.notifications import notification_send
from core.services.inbox import notices_clear, notifications_mark_read_for
from freeze import policies
from freeze.models import Component, FreezeOverride
from freeze.selectors import levels_at
from program import policies as program_policies

MSG_TOO_LONG = "A break-glass override lasts at most 24 hours: ends_at must be by {limit:%Y-%m-%d %H:%M} UTC."
MSG_PAST = "ends_at must be in the future."
MSG_REASON = "Say what is broken and why it cannot wait."
MSG_NOTE = "Write the review note: what was changed, and whether it should have waited."
MSG_OWN = policies.MSG_OWN
MSG_REVIEWED = "Override #{pk} was already reviewed by {who} on {at:%Y-%m-%d %H:%M} UTC."


def _notify(override: FreezeOverride, event: str, subject: str, users: list[User]) -> None:
    notification_send(
        event=event,
        subject=subject,
        body=f"{override.component.key} may change until {override.ends_at:%Y-%m-%d %H:%M} UTC whatever "
        f"its freeze level. Opened by {override.opened_by.username}: {override.reason}",
        link=override_link(override),
        payload={"override": override.pk, "component": override.component.key},
        users=users,
    )


def override_link(override: FreezeOverride) -> str:
    return f"{reverse('freeze:list')}#override-{override.pk}"


def _concerned(override: FreezeOverride, *, with_opener: bool = False) -> list[User]:
    """The component's owner team and the leads of the programs whose freeze the override lifts (those
    with a window in force when it opened); the opener only `with_opener` (told it still waits for a
    review, not that they opened it). An override belongs to no one program, so its notices reach only
    the webhook endpoints that hear every program."""
    programs = {found.window.program_id for found in levels_at(override.component, override.starts_at)}
    leads = Q()
    for program_id in sorted(programs):
        leads |= Q(pk__in=program_policies.lead_user_ids(program_id))
    people = get_user_model().objects.filter(
        Q(groups__name=override.component.owner_team) | leads, is_active=True
    )
    if not with_opener:
        people = people.exclude(pk=override.opened_by_id)
    return list(people.distinct().order_by("pk"))


def override_open(*, actor: User, component: Component, reason: str, ends_at: datetime) -> FreezeOverride:
    """Open now, until `ends_at` (at most 24 h ahead). The actor must lead a program (refused
    before any validation); the actor is recorded as the opener."""
    policies.require_open_override(actor)
    now = timezone.now()
    if not reason.strip():
        raise ApplicationError(MSG_REASON, status=400, field="reason")
    if ends_at <= now:
        raise ApplicationError(MSG_PAST, status=400, field="ends_at")
    if ends_at - now > FreezeOverride.MAX_LENGTH:
        raise ApplicationError(
            MSG_TOO_LONG.format(limit=now + FreezeOverride.MAX_LENGTH), status=400, field="ends_at"
        )
    with transaction.atomic():
        override = FreezeOverride.objects.create(
            component=component, opened_by=actor, reason=reason.strip(), starts_at=now, ends_at=ends_at
        )
        transition_record(
            subject=override,
            action="opened",
            actor=actor,
            to_state="awaiting_review",
            reason=override.reason,
            data={"component": component.key, "ends_at": ends_at.isoformat()},
        )
        _notify(
            override,
            "override.opened",
            f"Break-glass override on {component.key} until {ends_at:%Y-%m-%d %H:%M} UTC",
            _concerned(override),
        )
    return override


def override_reviewer_check(*, actor: User, override: FreezeOverride) -> None:
    """Refuses (PermissionDenied) unless the actor leads a program and is not the override's opener."""
    policies.require_review_override(actor, override)


def override_review(*, actor: User, override: FreezeOverride, note: str) -> FreezeOverride:
    """A actor other than the opener writes the review note, once; it may come while the override
    still lasts (the review does not end it)."""
    override_reviewer_check(actor=actor, override=override)
    if not note.strip():
        raise ApplicationError(MSG_NOTE, status=400, field="review_note")
    with transaction.atomic():
        override = (
            FreezeOverride.objects.select_for_update(of=("self",))
            .select_related("component", "opened_by", "reviewed_by")
            .get(pk=override.pk)
        )
        if override.reviewed_at is not None:
            raise ApplicationError(
                MSG_REVIEWED.format(
                    pk=override.pk,
                    who=override.reviewed_by.username if override.reviewed_by else "someone",
                    at=override.reviewed_at,
                )
            )
        was = override.review_status
        override.review_note = note.strip()
        override.reviewed_by = actor
        override.reviewed_at = timezone.now()
        override.save(update_fields=["review_note", "reviewed_by", "reviewed_at"])
        transition_record(
            subject=override,
            action="reviewed",
            actor=actor,
            from_state=was,
            to_state="reviewed",
            reason=override.review_note,
        )
        notifications_mark_read_for(actor=actor, link=override_link(override))
        # One review answers it: "to review" is done for every lead it went to.
        notices_clear(link=override_link(override), events=["override.opened", "override.overdue"])
        _notify(
            override,
            "override.reviewed",
            f"Break-glass override #{override.pk} on {override.component.key} reviewed",
            [override.opened_by],
        )
    return override


def overrides_warn_overdue(now: datetime | None = None) -> list[int]:
    """Periodic: once an override has gone 72 h without a review note, tell the program leads (once)."""
    now = now or timezone.now()
    warned = []
    due = FreezeOverride.objects.filter(
        reviewed_at__isnull=True,
        overdue_warned_at__isnull=True,
        starts_at__lte=now - FreezeOverride.REVIEW_WITHIN,
    ).select_related("component", "opened_by")
    for override in due.order_by("pk"):
        with transaction.atomic():
            claimed = FreezeOverride.objects.filter(
                pk=override.pk, reviewed_at__isnull=True, overdue_warned_at__isnull=True
            ).update(overdue_warned_at=now)
            if not claimed:
                continue  # reviewed meanwhile, or another run warned already
            transition_record(subject=override, action="overdue", from_state="awaiting", to_state="overdue")
            _notify(
                override,
                "override.overdue",
                f"Break-glass override #{override.pk} on {override.component.key} still needs a review",
                _concerned(override, with_opener=True),
            )
            warned.append(override.pk)
    return warned

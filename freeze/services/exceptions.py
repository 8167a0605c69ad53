"""Freeze exceptions: one service per transition (create, edit, submit, approve, reject, withdraw,
revoke, expire). Each locks the row, checks who may act, writes the history in the same transaction,
and notifies after commit."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django_fsm import TransitionNotAllowed

from core.audit import transition_record
from core.errors import ApplicationError
from core.notifications import notification_send
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, has_role, in_team, require_role
from core.transitions import fsm_sources, require_state
from freeze.models import Approval, Component, FreezeException, FreezeWindow, Level
from freeze.selectors import level_at

Status = FreezeException.Status
MSG_FROZEN = (
    "{component} is frozen in '{window}': no exception can be filed. A program lead can change its level "
    "to 'approval' on the freeze list."
)
MSG_UNNECESSARY = "{component} is open {where}: the change needs no exception."
MSG_SELF_APPROVAL = "You requested or edited this exception; someone else must approve or reject it."
MSG_NOT_APPROVER = "Only members of {team} or program leads may decide exceptions on {component}."
MSG_REASON = "Say why."
MSG_ENDED = "The change window has already ended: change_ends_at must be in the future."
ACTIONS = {
    "edit": "editing",
    "submit": "submitting",
    "approve": "approving",
    "reject": "rejecting",
    "withdraw": "withdrawing",
    "revoke": "revoking",
}
EDITABLE = ("title", *FreezeException.MATERIAL_FIELDS)


def _lock(exception: FreezeException) -> FreezeException:
    return (
        FreezeException.objects.select_for_update()
        .select_related("component", "window", "requester")
        .get(pk=exception.pk)
    )


def _require(exception: FreezeException, action: str) -> None:
    """Refuse an action its FSM transition's `source=` list does not allow from the effective status:
    once the change window has ended, the exception is expired whatever the row still says."""
    state = exception.effective_status
    subject = f"Exception #{exception.pk}"
    if state == Status.EXPIRED and exception.status != Status.EXPIRED:
        subject += f" (its change window ended {exception.change_ends_at:%Y-%m-%d %H:%M} UTC)"
    require_state(
        subject=subject,
        state=state,
        action=ACTIONS[action],
        allowed=fsm_sources(getattr(FreezeException, action)),
    )


def _move(
    exception: FreezeException, method: str, *, actor, reason: str = "", data: dict | None = None
) -> None:
    """Run the state-machine transition `method`, save, and record it."""
    before = exception.status
    try:
        getattr(exception, method)()
    except TransitionNotAllowed:
        raise ApplicationError(f"A {before} exception cannot be {method.rstrip('e')}ed.") from None
    exception.save()
    transition_record(
        subject=exception,
        action=method,
        actor=actor,
        from_state=before,
        to_state=exception.status,
        reason=reason,
        data=data,
    )


def _validate_change_window(window: FreezeWindow, starts: datetime, ends: datetime) -> None:
    if ends <= starts:
        raise ApplicationError(
            "change_ends_at must be after change_starts_at.", status=400, field="change_ends_at"
        )
    if ends <= timezone.now():
        raise ApplicationError(MSG_ENDED, status=400, field="change_ends_at")
    if starts < window.starts_at or ends > window.ends_at:
        raise ApplicationError(
            f"The change window must lie inside '{window.name}' ({window.starts_at:%Y-%m-%d %H:%M} – "
            f"{window.ends_at:%Y-%m-%d %H:%M} UTC).",
            status=400,
            field="change_starts_at" if starts < window.starts_at else "change_ends_at",
        )


def _refuse_by_level(component: Component, window: FreezeWindow, starts: datetime) -> None:
    found = level_at(component, starts, windows=[window])
    if found.level == Level.FROZEN:
        raise ApplicationError(
            MSG_FROZEN.format(component=component.key, window=window.name), field="component"
        )
    if found.level == Level.OPEN:
        raise ApplicationError(
            MSG_UNNECESSARY.format(component=component.key, where=f"in '{window.name}'"),
            status=400,
            field="component",
        )


def _approvers(exception: FreezeException) -> list:
    users = (
        get_user_model()
        .objects.filter(Q(groups__name=exception.component.owner_team) | Q(groups__name=PROGRAM_LEADS))
        .exclude(pk=exception.requester_id)
        .exclude(pk__in=exception.authors.values("pk"))
        .distinct()
    )
    return list(users)


def _notify(exception: FreezeException, event: str, subject: str, users: list) -> None:
    notification_send(
        event=event,
        subject=subject,
        body=f"{exception.title} — {exception.component.key}, {exception.change_starts_at:%Y-%m-%d %H:%M} to "
        f"{exception.change_ends_at:%Y-%m-%d %H:%M} UTC, risk {exception.risk}. Status: {exception.status}.",
        link=reverse("freeze:exception", args=[exception.pk]),
        payload={"exception": exception.pk, "status": exception.status},
        users=users,
    )


@transaction.atomic
def exception_create(
    *,
    requester,
    component: Component,
    window: FreezeWindow | None = None,
    title: str,
    change: str,
    justification: str,
    risk: str,
    rollback_plan: str,
    change_starts_at: datetime,
    change_ends_at: datetime,
) -> FreezeException:
    require_role(requester, FRAMEWORK_ENGINEERS, "file freeze exceptions")
    if window is None:
        found = level_at(component, change_starts_at)
        if found.window is None:
            raise ApplicationError(
                MSG_UNNECESSARY.format(component=component.key, where="then: no freeze window is in force"),
                status=400,
                field="change_starts_at",
            )
        window = found.window
    _validate_change_window(window, change_starts_at, change_ends_at)
    _refuse_by_level(component, window, change_starts_at)
    exception = FreezeException.objects.create(
        component=component,
        window=window,
        requester=requester,
        last_editor=requester,
        title=title,
        change=change,
        justification=justification,
        risk=risk,
        rollback_plan=rollback_plan,
        change_starts_at=change_starts_at,
        change_ends_at=change_ends_at,
    )
    exception.authors.add(requester)
    transition_record(subject=exception, action="created", actor=requester, to_state=exception.status)
    return exception


def exception_edit(*, editor, exception: FreezeException, changes: dict[str, Any]) -> FreezeException:
    """Edit an open exception; the editor becomes one of its authors, who never decide it.

    A material edit after submission returns it to submitted and dismisses every approval: what was
    approved is no longer what would ship. Any edit by someone whose approval stands dismisses that
    approval (and returns an approved exception to submitted if the rest no longer suffice). Saving
    unchanged values is no edit."""
    require_role(editor, FRAMEWORK_ENGINEERS, "edit freeze exceptions")
    with transaction.atomic():
        exception = _lock(exception)
        _require(exception, "edit")
        changed = [f for f in EDITABLE if f in changes and changes[f] != getattr(exception, f)]
        if not changed:
            return exception
        for field in changed:
            setattr(exception, field, changes[field])
        _validate_change_window(exception.window, exception.change_starts_at, exception.change_ends_at)
        exception.edit()
        exception.last_editor = editor
        exception.authors.add(editor)
        material = [f for f in changed if f in FreezeException.MATERIAL_FIELDS]
        standing = Approval.objects.filter(exception=exception, dismissed_at__isnull=True)
        if material and exception.status in (Status.SUBMITTED, Status.APPROVED):
            dismissed = standing.update(dismissed_at=timezone.now())
            exception.required_approvals = _required_approvals(exception)
            _resubmit(exception, editor, f"material edit: {', '.join(material)}", dismissed)
            return exception
        dismissed = standing.filter(approver=editor).update(dismissed_at=timezone.now())
        if dismissed and exception.status == Status.APPROVED and not _enough_approvals(exception):
            _resubmit(exception, editor, "edited by an approver, whose approval no longer counts", dismissed)
            return exception
        exception.save()
        data = {"fields": changed, **({"dismissed_approvals": dismissed} if dismissed else {})}
        transition_record(subject=exception, action="edited", actor=editor, data=data)
    return exception


def _resubmit(exception: FreezeException, editor, reason: str, dismissed: int) -> None:
    _move(exception, "resubmit", actor=editor, reason=reason, data={"dismissed_approvals": dismissed})
    _notify(
        exception,
        "exception.submitted",
        f"Exception changed, review again: {exception.title}",
        _approvers(exception),
    )


def _required_approvals(exception: FreezeException) -> int:
    return 2 if exception.risk == FreezeException.Risk.HIGH else 1


def exception_submit(*, requester, exception: FreezeException) -> FreezeException:
    with transaction.atomic():
        exception = _lock(exception)
        if exception.requester_id != requester.pk:
            raise PermissionDenied("Only the requester submits their exception.")
        _require(exception, "submit")
        _refuse_by_level(exception.component, exception.window, exception.change_starts_at)
        exception.required_approvals = _required_approvals(exception)
        _move(exception, "submit", actor=requester)
        _notify(
            exception,
            "exception.submitted",
            f"Freeze exception awaiting approval: {exception.title}",
            _approvers(exception),
        )
    return exception


def _check_approver(user, exception: FreezeException) -> bool:
    """Returns whether the user acts as a program lead; refuses anyone else who may not decide."""
    if exception.is_author(user):
        raise PermissionDenied(MSG_SELF_APPROVAL)
    is_lead = has_role(user, PROGRAM_LEADS)
    if not (is_lead or in_team(user, exception.component.owner_team)):
        raise PermissionDenied(
            MSG_NOT_APPROVER.format(team=exception.component.owner_team, component=exception.component.key)
        )
    return is_lead


def exception_actor_check(*, user, exception: FreezeException, action: str) -> None:
    """Refuses (PermissionDenied) someone the object-level rules keep from `action` on this exception.

    The API asks before it reads the request body; the transitions check again under the row lock."""
    if action == "edit":
        require_role(user, FRAMEWORK_ENGINEERS, "edit freeze exceptions")
    elif action == "revoke":
        require_role(user, PROGRAM_LEADS, "revoke exceptions")
    elif action in ("submit", "withdraw") and exception.requester_id != user.pk:
        raise PermissionDenied(f"Only the requester {action}s their exception.")
    elif action in ("approve", "reject"):
        _check_approver(user, exception)


def _record_verdict(exception: FreezeException, user, verdict: str, comment: str, is_lead: bool) -> None:
    try:
        with transaction.atomic():
            Approval.objects.create(
                exception=exception, approver=user, verdict=verdict, comment=comment, as_program_lead=is_lead
            )
    except IntegrityError:
        raise ApplicationError("You already decided on this exception; one person counts once.") from None


def _standing_approvals(exception: FreezeException):
    """Approvals that count: not dismissed, and never an author's, however the row got there (an
    approval given before its approver edited the exception under older rules)."""
    return Approval.objects.filter(
        exception=exception, verdict=Approval.Verdict.APPROVE, dismissed_at__isnull=True
    ).exclude(approver__in=exception.authors.all())


def _enough_approvals(exception: FreezeException) -> bool:
    """Enough standing approvals: the required number, one of them a program lead's when more than one."""
    approvals = list(_standing_approvals(exception))
    if len(approvals) < exception.required_approvals:
        return False
    return exception.required_approvals == 1 or any(a.as_program_lead for a in approvals)


def exception_approve(*, approver, exception: FreezeException, comment: str = "") -> FreezeException:
    """Counts one approval. Enough approvals (two distinct, one a program lead, for high risk) approve it."""
    with transaction.atomic():
        exception = _lock(exception)
        is_lead = _check_approver(approver, exception)
        _require(exception, "approve")
        _record_verdict(exception, approver, Approval.Verdict.APPROVE, comment, is_lead)
        transition_record(
            subject=exception,
            action="approval",
            actor=approver,
            reason=comment,
            data={
                "approvals": _standing_approvals(exception).count(),
                "required": exception.required_approvals,
            },
        )
        if _enough_approvals(exception):
            _move(exception, "approve", actor=approver, reason=comment)
            _notify(
                exception,
                "exception.decided",
                f"Freeze exception approved: {exception.title}",
                [exception.requester],
            )
    return exception


def exception_reject(*, approver, exception: FreezeException, reason: str) -> FreezeException:
    with transaction.atomic():
        exception = _lock(exception)
        is_lead = _check_approver(approver, exception)
        _require(exception, "reject")
        if not reason.strip():
            raise ApplicationError(MSG_REASON, status=400, field="reason")
        _record_verdict(exception, approver, Approval.Verdict.REJECT, reason, is_lead)
        exception.closing_reason = reason
        _move(exception, "reject", actor=approver, reason=reason)
        _notify(
            exception,
            "exception.decided",
            f"Freeze exception rejected: {exception.title}",
            [exception.requester],
        )
    return exception


def exception_withdraw(*, requester, exception: FreezeException, reason: str = "") -> FreezeException:
    with transaction.atomic():
        exception = _lock(exception)
        if exception.requester_id != requester.pk:
            raise PermissionDenied("Only the requester withdraws their exception.")
        _require(exception, "withdraw")
        exception.closing_reason = reason
        _move(exception, "withdraw", actor=requester, reason=reason)
    return exception


def exception_revoke(*, lead, exception: FreezeException, reason: str) -> FreezeException:
    require_role(lead, PROGRAM_LEADS, "revoke exceptions")
    if not reason.strip():
        raise ApplicationError(MSG_REASON, status=400, field="reason")
    with transaction.atomic():
        exception = _lock(exception)
        _require(exception, "revoke")
        exception.closing_reason = reason
        _move(exception, "revoke", actor=lead, reason=reason)
        _notify(
            exception,
            "exception.decided",
            f"Freeze exception revoked: {exception.title}",
            [exception.requester],
        )
    return exception


def exceptions_expire(now: datetime | None = None) -> list[int]:
    """Periodic: mark open exceptions whose change window has ended as expired, and tell requesters.
    (They were expired at that moment already: every read and every service uses effective_status.)"""
    now = now or timezone.now()
    expired = []
    ended = FreezeException.objects.filter(
        status__in=FreezeException.OPEN_STATUSES, change_ends_at__lte=now
    ).order_by("pk")
    for candidate in ended:
        with transaction.atomic():
            exception = _lock(candidate)
            if exception.status not in FreezeException.OPEN_STATUSES or exception.change_ends_at > now:
                continue
            _move(exception, "expire", actor=None, reason="change window ended")
            _notify(
                exception,
                "exception.expired",
                f"Freeze exception expired: {exception.title}",
                [exception.requester],
            )
            expired.append(exception.pk)
    return expired


def exceptions_warn_expiring(now: datetime | None = None) -> list[int]:
    """Periodic: tell requesters once when an approved exception ends within 24 hours."""
    now = now or timezone.now()
    warned = []
    due = FreezeException.objects.filter(
        status=Status.APPROVED,
        expiry_warned_at__isnull=True,
        change_ends_at__gt=now,
        change_ends_at__lte=now + timedelta(hours=24),
    )
    for exception in due.select_related("component", "requester"):
        with transaction.atomic():
            if not FreezeException.objects.filter(pk=exception.pk, expiry_warned_at__isnull=True).update(
                expiry_warned_at=now
            ):
                continue  # another run warned already
            _notify(
                exception,
                "exception.expiring",
                f"Freeze exception ends within 24 h: {exception.title}",
                [exception.requester],
            )
            warned.append(exception.pk)
    return warned

"""The freeze exception workflow: one service per transition (submit, approve, reject, withdraw,
revoke, expire) and `exception_act`, the single entry the page and the API both call.

Each service locks the row, asks exception_allowed_actions who may act (the actor rule) and django-fsm
whether the state allows it (the transition guard), writes the history in the same transaction and
notifies after commit (core.notifications queues on commit)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django_fsm import TransitionNotAllowed, can_proceed

from core.audit import transition_record
from core.errors import ApplicationError
from core.notifications import notification_send
from core.roles import in_team
from core.services.inbox import notices_clear, notifications_mark_read_for
from core.transitions import fsm_sources, require_state
from freeze.models import Approval, Component, FreezeException, FreezeWindow, Level
from freeze.selectors import level_at
from freeze.selectors.exceptions import (
    approvals_enough,
    approvals_standing,
    exception_allowed_actions,
    exception_approvers,
)
from freeze.services.approval_bar import approval_requirement_apply
from freeze.services.expected_impacts import expected_impacts_complete_check
from freeze.services.gate_impact import exception_gates_reevaluate
from program import policies as program_policies

Status = FreezeException.Status
APPROVAL_EVENT = "exception.submitted"  # "awaiting approval": a to-do for those who may approve
MSG_REASON = "Say why."
MSG_FROZEN = (
    "{component} is frozen in '{window}': no exception can be filed. A program lead can change its level "
    "to 'approval' on the freeze list."
)
MSG_UNNECESSARY = "{component} is open {where}: the change needs no exception."
# The words for each transition, spelled out: never built by gluing "ed" onto a verb.
GERUND = {
    "edit": "editing",
    "submit": "submitting",
    "resubmit": "resubmitting",
    "approve": "approving",
    "reject": "rejecting",
    "withdraw": "withdrawing",
    "revoke": "revoking",
    "expire": "expiring",
}
PAST_PARTICIPLE = {
    "edit": "edited",
    "submit": "submitted",
    "resubmit": "resubmitted",
    "approve": "approved",
    "reject": "rejected",
    "withdraw": "withdrawn",
    "revoke": "revoked",
    "expire": "expired",
}


def lock(exception: FreezeException) -> FreezeException:
    locked: FreezeException = (
        FreezeException.objects.select_for_update()
        .select_related("component", "window", "requester")
        .get(pk=exception.pk)
    )
    return locked


def guard(exception: FreezeException, action: str) -> None:
    """The transition guard, django-fsm's: the `source=` list and the change-window condition. Refuses
    (409) naming the effective status: once the change window has ended the exception is expired."""
    if can_proceed(getattr(exception, action)):
        return
    subject = f"Exception #{exception.pk}"
    if exception.effective_status == Status.EXPIRED and exception.status != Status.EXPIRED:
        subject += f" (its change window ended {exception.change_ends_at:%Y-%m-%d %H:%M} UTC)"
    require_state(
        subject=subject,
        state=exception.effective_status,
        action=GERUND[action],
        allowed=fsm_sources(getattr(FreezeException, action)),
    )
    raise ApplicationError(f"A {exception.effective_status} exception cannot be {PAST_PARTICIPLE[action]}.")


def move(
    exception: FreezeException,
    method: str,
    *,
    actor: User | None,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> None:
    """Run the state-machine transition `method`, save, and record it (and the actor's notices about
    it are read: acting answers them)."""
    before = exception.status
    try:
        getattr(exception, method)()
    except TransitionNotAllowed:
        raise ApplicationError(f"A {before} exception cannot be {PAST_PARTICIPLE[method]}.") from None
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
    acted_on(actor, exception)
    approval_notices_sync(exception)


def approval_notices_sync(exception: FreezeException) -> None:
    """ "Awaiting approval" stays open only for those who may approve it now (exception_approvers, the
    rule the approve button follows): done for everyone once it left `submitted`, and for each person
    who decided, edited it, or otherwise lost the right."""
    keep = (
        {user.pk for user in exception_approvers(exception)}
        if exception.status == Status.SUBMITTED
        else set()
    )
    notices_clear(link=exception_link(exception), events=[APPROVAL_EVENT], keep_user_ids=keep)


def exception_link(exception: FreezeException) -> str:
    return reverse("freeze:exception", args=[exception.pk])


def acted_on(actor: User | None, exception: FreezeException) -> None:
    """The actor's own notices about this exception are answered by acting on it: marked read with it."""
    if actor is not None:
        notifications_mark_read_for(actor=actor, link=exception_link(exception))


def notify(exception: FreezeException, event: str, subject: str, users: list[User]) -> None:
    notification_send(
        event=event,
        subject=subject,
        body=f"{exception.title} — {exception.component.key}, {exception.change_starts_at:%Y-%m-%d %H:%M} to "
        f"{exception.change_ends_at:%Y-%m-%d %H:%M} UTC, risk {exception.risk}. Status: {exception.status}.",
        link=exception_link(exception),
        payload={"exception": exception.pk, "status": exception.status},
        users=users,
        program_key=exception.window.program.slug,
    )


def notify_approvers(exception: FreezeException, subject: str) -> None:
    """Only people exception_allowed_actions lets approve it now (never an author), and of those the
    ones it concerns: the component's owner team and the leads of the window's program. Platform admins
    may approve any exception but are not asked to, unless they are one of those."""
    owners = exception.component.owner_team
    program_id = exception.window.program_id
    concerned = [
        user
        for user in exception_approvers(exception)
        if in_team(user, owners) or program_policies.is_member(user, program_id)
    ]
    # A resubmission asks again: the notices of the earlier round are replaced by this one.
    notices_clear(link=exception_link(exception), events=[APPROVAL_EVENT])
    notify(exception, APPROVAL_EVENT, subject, concerned)


def refuse_by_level(component: Component, window: FreezeWindow, starts: datetime) -> None:
    """Exceptions exist for level `approval` only: frozen takes none, open needs none."""
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


def exception_submit(*, actor: User, exception: FreezeException) -> FreezeException:
    """Submit for approval. Only the requester (the actor must be the one who filed it) submits;
    the approvals it needs are fixed now (freeze.services.approval_bar)."""
    with transaction.atomic():
        exception = lock(exception)
        exception_allowed_actions(actor, exception).require("submit")
        guard(exception, "submit")
        refuse_by_level(exception.component, exception.window, exception.change_starts_at)
        expected_impacts_complete_check(exception)
        requirement = approval_requirement_apply(exception)
        move(exception, "submit", actor=actor, data={"approval_rule": requirement.rule})
        notify_approvers(exception, f"Freeze exception awaiting approval: {exception.title}")
    return exception


def _record_verdict(
    exception: FreezeException, actor: User, verdict: str, comment: str, is_lead: bool
) -> None:
    try:
        with transaction.atomic():
            Approval.objects.create(
                exception=exception, approver=actor, verdict=verdict, comment=comment, as_program_lead=is_lead
            )
    except IntegrityError:
        raise ApplicationError("You already decided on this exception; one person counts once.") from None
    acted_on(actor, exception)


def exception_approve(*, actor: User, exception: FreezeException, comment: str = "") -> FreezeException:
    """Counts the actor's approval. The actor must be an approver (the component's owner team or a
    program lead) and never one of its authors (requester or editors); one verdict per person.
    Enough approvals (the number fixed at submission, and a program lead among them when that was
    required) approve it, and re-evaluate the gates using its affected metrics."""
    with transaction.atomic():
        exception = lock(exception)
        allowed = exception_allowed_actions(actor, exception)
        allowed.require("approve")
        guard(exception, "approve")
        _record_verdict(exception, actor, Approval.Verdict.APPROVE, comment, allowed.as_program_lead)
        transition_record(
            subject=exception,
            action="approval",
            actor=actor,
            reason=comment,
            data={"approvals": len(approvals_standing(exception)), "required": exception.required_approvals},
        )
        if not approvals_enough(exception):
            # Still short: the approver's own notice is done, the other approvers' stay open.
            approval_notices_sync(exception)
        else:
            move(exception, "approve", actor=actor, reason=comment)
            exception_gates_reevaluate(exception, "approved", actor=actor)
            notify(
                exception,
                "exception.decided",
                f"Freeze exception approved: {exception.title}",
                [exception.requester],
            )
    return exception


def exception_reject(*, actor: User, exception: FreezeException, reason: str) -> FreezeException:
    """One rejection rejects. The actor must be an approver (owner team or program lead) and never one
    of its authors; the reason is required."""
    with transaction.atomic():
        exception = lock(exception)
        allowed = exception_allowed_actions(actor, exception)
        allowed.require("reject")
        guard(exception, "reject")
        if not reason.strip():
            raise ApplicationError(MSG_REASON, status=400, field="reason")
        _record_verdict(exception, actor, Approval.Verdict.REJECT, reason, allowed.as_program_lead)
        exception.closing_reason = reason
        move(exception, "reject", actor=actor, reason=reason)
        notify(
            exception,
            "exception.decided",
            f"Freeze exception rejected: {exception.title}",
            [exception.requester],
        )
    return exception


def exception_withdraw(*, actor: User, exception: FreezeException, reason: str = "") -> FreezeException:
    """Only the requester (the actor must be the one who filed it) withdraws an open exception."""
    with transaction.atomic():
        exception = lock(exception)
        exception_allowed_actions(actor, exception).require("withdraw")
        guard(exception, "withdraw")
        exception.closing_reason = reason
        was_in_force = exception.status == Status.APPROVED
        move(exception, "withdraw", actor=actor, reason=reason)
        if was_in_force:
            exception_gates_reevaluate(exception, "withdrawn", actor=actor)
    return exception


def exception_revoke(*, actor: User, exception: FreezeException, reason: str) -> FreezeException:
    """A program lead (the actor) revokes an approved exception, with a reason."""
    exception_allowed_actions(actor, exception).require("revoke")
    if not reason.strip():
        raise ApplicationError(MSG_REASON, status=400, field="reason")
    with transaction.atomic():
        exception = lock(exception)
        guard(exception, "revoke")
        exception.closing_reason = reason
        move(exception, "revoke", actor=actor, reason=reason)
        exception_gates_reevaluate(exception, "revoked", actor=actor)
        notify(
            exception,
            "exception.decided",
            f"Freeze exception revoked: {exception.title}",
            [exception.requester],
        )
    return exception


# The one table of what each action runs: the page's buttons and the API's endpoints both come here.
_ACT = {
    "submit": lambda actor, e, text: exception_submit(actor=actor, exception=e),
    "approve": lambda actor, e, text: exception_approve(actor=actor, exception=e, comment=text),
    "reject": lambda actor, e, text: exception_reject(actor=actor, exception=e, reason=text),
    "withdraw": lambda actor, e, text: exception_withdraw(actor=actor, exception=e, reason=text),
    "revoke": lambda actor, e, text: exception_revoke(actor=actor, exception=e, reason=text),
}
ACT_ACTIONS = tuple(_ACT)


def exception_act(*, actor: User, exception: FreezeException, action: str, text: str = "") -> FreezeException:
    """The actor takes `action` (submit, approve, reject, withdraw, revoke) with its comment or reason
    `text`; who may take which is exception_allowed_actions' rule, which each service asks."""
    if action not in _ACT:
        raise ApplicationError(f"No action '{action}'.", status=400, field="action")
    return _ACT[action](actor, exception, text)


def exceptions_expire(now: datetime | None = None) -> list[int]:
    """Periodic: mark open exceptions whose change window has ended as expired, and tell requesters.
    (They were expired at that moment already: every read and every service uses the effective status.)"""
    now = now or timezone.now()
    expired = []
    ended = FreezeException.objects.filter(
        status__in=FreezeException.OPEN_STATUSES, change_ends_at__lte=now
    ).order_by("pk")
    for candidate in ended:
        with transaction.atomic():
            exception = lock(candidate)
            if exception.status not in FreezeException.OPEN_STATUSES or exception.change_ends_at > now:
                continue
            was_in_force = exception.status == Status.APPROVED
            move(exception, "expire", actor=None, reason="change window ended")
            if was_in_force:  # one never approved changed nothing the gates saw
                exception_gates_reevaluate(exception, "expired")
            notify(
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
            notify(
                exception,
                "exception.expiring",
                f"Freeze exception ends within 24 h: {exception.title}",
                [exception.requester],
            )
            warned.append(exception.pk)
    return warned

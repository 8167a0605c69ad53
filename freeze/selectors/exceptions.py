"""Who may do what to a freeze exception, and the lists built on that answer.

`exception_allowed_actions(user, exception)` is the one statement of the workflow's actor rules (the
approver rule among them). The services refuse with its reasons, the pages draw their buttons from it,
the approval queues (the exception pages, the API's ?awaiting, "My work") and the notification
recipients are the people for whom it says `approve`. The state half of every answer is django-fsm's
(the transitions' `source=` lists and their change-window condition on FreezeException)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.postgres.aggregates import ArrayAgg
from django.core.exceptions import PermissionDenied
from django.db.models import BooleanField, Count, ExpressionWrapper, Prefetch, Q, QuerySet, Value
from django_fsm import can_proceed

from core.roles import PLATFORM_ADMINS
from freeze import policies
from freeze.models import (
    Approval,
    Component,
    ExpectedImpact,
    FreezeEntry,
    FreezeException,
    FreezeWindow,
    Level,
)
from freeze.selectors.levels import level_at, windows_at
from program import policies as program_policies

ACTIONS = ("edit", "submit", "approve", "reject", "withdraw", "revoke")
# The rules themselves live in freeze.policies; these names stay importable from here.
DECISIONS = policies.DECISIONS
MSG_SELF_APPROVAL = policies.MSG_SELF_APPROVAL
MSG_NOT_APPROVER = policies.MSG_NOT_APPROVER
MSG_ROLE = policies.MSG_ROLE
MSG_REQUESTER = policies.MSG_REQUESTER


def _author_ids(exception: FreezeException) -> frozenset[int]:
    """The requester, the last editor and every editor: read once per exception object (prefetched
    `authors` when a list asked for them)."""
    cached = getattr(exception, "_author_ids_cache", None)
    if cached is None:
        editors = getattr(exception, "author_pks", None)  # exceptions_awaiting's annotation
        if editors is None:
            editors = [u.pk for u in exception.authors.all()]
        cached = frozenset({exception.requester_id, exception.last_editor_id, *editors})
        exception._author_ids_cache = cached
    return cached


def _standing_approver_ids(exception: FreezeException) -> set[int]:
    """Who has an undismissed verdict (approve or reject) in this round of review."""
    annotated = getattr(exception, "verdict_pks", None)  # exceptions_awaiting's annotation
    if annotated is not None:
        return {pk for pk in annotated if pk is not None}
    return {a.approver_id for a in exception.approvals.all() if a.dismissed_at is None}


def _actor_refusal(user: User, exception: FreezeException, action: str) -> str | None:
    """Why `user` may never take `action` on this exception, whatever its state (freeze.policies)."""
    return policies.exception_actor_refusal(user, exception, action, _author_ids(exception))


@dataclass(frozen=True)
class AllowedActions:
    """What one person may do to one exception. `refusals` is who-may (roles, requester, the approver
    rule); `buttons` adds the state (django-fsm) and one verdict per person per round."""

    refusals: dict[str, str | None]
    buttons: dict[str, bool] = field(default_factory=dict)
    as_program_lead: bool = False

    def may(self, action: str) -> bool:
        return self.refusals.get(action) is None

    def require(self, action: str) -> None:
        """Refuse (PermissionDenied, a 403) someone the actor rules keep from `action`."""
        if (refusal := self.refusals.get(action)) is not None:
            raise PermissionDenied(refusal)

    def __getattr__(self, action: str) -> bool:  # templates and queues: allowed.approve, allowed.edit
        if action in ACTIONS:
            return self.buttons[action]
        raise AttributeError(action)


def exception_allowed_actions(user: User, exception: FreezeException) -> AllowedActions:
    refusals = {action: _actor_refusal(user, exception, action) for action in ACTIONS}
    decided = user.pk in _standing_approver_ids(exception) if refusals["approve"] is None else True
    buttons: dict[str, bool] = {}
    for action in ACTIONS:
        allowed = refusals[action] is None and can_proceed(getattr(exception, action))
        buttons[action] = allowed and not (action in DECISIONS and decided)
    return AllowedActions(refusals, buttons, policies.approves_as_lead(user, exception))


def exception_approvers(exception: FreezeException) -> list[User]:
    """Everyone who may approve it now: the owner team's members, the leads of the window's program and
    the platform admins, minus its authors and anyone whose verdict stands. The notification recipients
    and the page's "who may approve" line. Three queries."""
    program_id = exception.window.program_id
    leads = Q(pk__in=program_policies.lead_user_ids(program_id))
    members = Q(pk__in=program_policies.member_user_ids(program_id))
    candidates = (
        get_user_model()
        .objects.filter(
            Q(groups__name=exception.component.owner_team)
            | leads
            | Q(groups__name=PLATFORM_ADMINS)
            | Q(is_superuser=True),
            is_active=True,
        )
        .annotate(
            leads_program=ExpressionWrapper(leads, output_field=BooleanField()),
            in_program=ExpressionWrapper(members, output_field=BooleanField()),
        )
        .prefetch_related("groups")
        .distinct()
        .order_by("username")
    )
    approvers: list[User] = []
    for user in candidates:
        # Prime what the policies read, from the prefetched groups and the leads (no query per user).
        setattr(user, "_group_names_cache", frozenset(g.name for g in user.groups.all()))  # noqa: B010
        # A member's exact role matters only as lead (approves as lead) or not (may read it if private).
        role = "lead" if user.leads_program else "viewer" if user.in_program else None
        program_policies.member_roles_prime(user, {program_id: role} if role else {})
        if exception_allowed_actions(user, exception).approve:
            approvers.append(user)
    return approvers


def approvals_standing(exception: FreezeException) -> list[Approval]:
    """Approvals that count: not dismissed, and never an author's."""
    authors = _author_ids(exception)
    return [
        a
        for a in exception.approvals.all()
        if a.verdict == Approval.Verdict.APPROVE and a.dismissed_at is None and a.approver_id not in authors
    ]


def approvals_enough(exception: FreezeException) -> bool:
    """The required number, one of them a program lead's when that was required (both fixed at
    submission: freeze.services.approval_bar)."""
    return policies.approvals_enough(exception, approvals_standing(exception))


def approval_progress(exception: FreezeException) -> str:
    """ "2 of 3 approvals, a program lead still needed": where a submitted exception stands."""
    standing = approvals_standing(exception)
    text = f"{len(standing)} of {exception.required_approvals} approvals"
    if exception.requires_lead_approval:
        has_lead = any(a.as_program_lead for a in standing)
        text += ", a program lead among them" if has_lead else ", a program lead still needed"
    return text


def _names(users: Iterable[User]) -> str:
    return ", ".join(u.username for u in users) or "nobody yet"


def approval_needs(exception: FreezeException, approvers: list[User]) -> str:
    """What is still needed, in words: "1 more approval from: alice, bob (owner team) or any program
    lead (carol)". Empty once nothing more is needed or nothing more can happen."""
    if exception.effective_status != FreezeException.Status.SUBMITTED:
        return ""
    standing = approvals_standing(exception)
    missing = max(exception.required_approvals - len(standing), 0)
    lead_missing = exception.requires_lead_approval and not any(a.as_program_lead for a in standing)
    leads = [u for u in approvers if policies.approves_as_lead(u, exception)]
    team = [u for u in approvers if u not in leads]
    owner = exception.component.owner_team
    if lead_missing and missing <= 1:
        return f"1 more approval from a program lead: {_names(leads)}."
    plural = "approval" if missing == 1 else "approvals"
    text = f"{missing} more {plural} from: {_names(team)} ({owner}) or any program lead ({_names(leads)})"
    return text + (", at least one of them a program lead." if lead_missing else ".")


def exceptions_list() -> QuerySet[FreezeException]:
    """Every exception with what its lists show: effective status, approval count, who is who."""
    listed: QuerySet[FreezeException] = (
        FreezeException.objects.with_effective_status()
        .select_related("component", "window", "requester", "last_editor")
        .annotate(
            approval_count=Count(
                "approvals", filter=Q(approvals__verdict="approve", approvals__dismissed_at__isnull=True)
            )
        )
        .order_by("-created_at", "-id")
    )
    return listed


def exceptions_awaiting(user: User) -> QuerySet[FreezeException]:
    """Submitted exceptions this user may approve now (exception_allowed_actions says `approve`): one
    query reads the candidates with their authors and verdicts, the queryset returned is the list."""
    candidates = (
        FreezeException.objects.effective_status_in([FreezeException.Status.SUBMITTED])
        .select_related("component", "window__program")
        .annotate(
            author_pks=ArrayAgg("authors__id", distinct=True, default=Value([])),
            verdict_pks=ArrayAgg(
                "approvals__approver_id",
                filter=Q(approvals__dismissed_at__isnull=True),
                distinct=True,
                default=Value([]),
            ),
        )
    )
    ids = [e.pk for e in candidates if exception_allowed_actions(user, e).approve]
    return exceptions_list().filter(pk__in=ids)


def exception_for_page(pk_queryset: QuerySet[FreezeException]) -> QuerySet[FreezeException]:
    """What the exception page and the allowed-actions answer need, prefetched."""
    return pk_queryset.select_related(
        "component", "window__program__candidate_system", "requester", "last_editor"
    ).prefetch_related(
        "authors",
        "approvals__approver",
        "affected_metrics",
        Prefetch("expected_impacts", queryset=ExpectedImpact.objects.select_related("metric")),
    )


def component_levels_at(moment: datetime, window: FreezeWindow | None = None) -> dict[int, str]:
    """Every component's level in force at `moment` (in `window` only, when given): three queries,
    through freeze.selectors.levels.level_at, the freeze check's own rule."""
    windows = [window] if window is not None else windows_at(moment)
    entries = {(e.window_id, e.component_id): e.level for e in FreezeEntry.objects.filter(window__in=windows)}
    return {
        c.pk: level_at(c, moment, windows=windows, entries=entries).level for c in Component.objects.all()
    }


@dataclass(frozen=True)
class LevelHint:
    component: Component
    level: str
    window: FreezeWindow | None
    moment: datetime

    @property
    def needs_exception(self) -> bool:
        return self.level == Level.APPROVAL


def exception_level_hint(component: Component, moment: datetime, window: FreezeWindow | None) -> LevelHint:
    """The level the exception form will meet: in the chosen window, or in the window in force when the
    change starts (what exception_create picks)."""
    found = level_at(component, moment, windows=[window] if window is not None else None)
    return LevelHint(component, found.level, found.window, moment)

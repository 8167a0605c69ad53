"""Who may do what in the freeze app: every permission rule of components, windows and levels,
exceptions and their approvals, and break-glass overrides, in one place. The services ask these, and
so do the selectors that build the approval queues, the API's write rules and the pages.

Program roles come from program.policies: a window belongs to a program, and the leads of that
program (or a platform admin) set its levels, revoke its exceptions, and give the lead approval that
a high-risk or late exception needs. Components are one catalogue shared by every program, each owned
by a team (`owner_team`, a group): its members decide exceptions on it, whatever the program."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import Q

from core.roles import FRAMEWORK_ENGINEERS, ROLE_LABELS, group_names
from freeze.models import Approval, FreezeException, FreezeOverride, FreezeWindow
from program import policies as program_policies

AnyUser = User | AnonymousUser

DECISIONS = ("approve", "reject")
MSG_NO_SUCH_EXCEPTION = "There is no freeze exception {pk}."
MSG_SELF_APPROVAL = "You requested or edited this exception; someone else must approve or reject it."
MSG_NOT_APPROVER = (
    "Only members of {team}, leads of program '{program}' or a platform admin may decide exceptions on "
    "{component}."
)
MSG_ROLE = "Only a {role} may {doing} freeze exceptions."
MSG_REQUESTER = "Only the requester {action}s their exception."
MSG_COMPONENTS = "Only a program creator (group program-leads) or a platform admin may manage components."
MSG_OWN = "You opened this override; another program lead reviews it."


# --- reading ------------------------------------------------------------------------------------------
# A window, and every exception filed under it, is read by whoever may read the window's program
# (program.policies: a private program by its members and platform admins only). The freeze check
# (freeze.api.check) asks none of this on purpose: CI must learn every program's freeze.


def windows_readable(user: AnyUser) -> Q:
    return program_policies.readable_filter(user, "program")


def exceptions_readable(user: AnyUser) -> Q:
    return program_policies.readable_filter(user, "window__program")


def may_read_window(user: AnyUser, window: FreezeWindow) -> bool:
    return program_policies.may_read(user, window.program)


def require_read_window(user: AnyUser, window: FreezeWindow, what: str) -> None:
    """The API's 404 ("There is no {what}.") for a window, or an exception, of a private program."""
    program_policies.require_read(user, window.program, what)


# --- components and windows ---------------------------------------------------------------------------


def require_manage_components(user: AnyUser) -> None:
    """The component catalogue is shared by every program: those who may create programs keep it."""
    if not program_policies.may_create_programs(user):
        raise PermissionDenied(MSG_COMPONENTS)


def is_window_lead(user: AnyUser, window: FreezeWindow) -> bool:
    return program_policies.is_lead(user, window.program_id)


def require_window_lead(user: AnyUser, window: FreezeWindow, action: str) -> None:
    """Setting a window's levels (one by one, or from a file): a lead of the window's program."""
    program_policies.require_lead(user, window.program, action)


# --- exceptions -----------------------------------------------------------------------------------------


def approves_as_lead(user: AnyUser, exception: FreezeException) -> bool:
    """Whether this user's approval is the lead approval a high-risk or late exception needs: a lead of
    the program whose window the exception is filed under (or a platform admin)."""
    return program_policies.is_lead(user, exception.window.program_id)


def exception_actor_refusal(
    user: User, exception: FreezeException, action: str, author_ids: frozenset[int]
) -> str | None:
    """Why `user` may never take `action` on this exception, whatever its state; None if they may.
    `author_ids`: the requester, the last editor and every editor (separation of duties). Nobody acts
    on an exception of a private program they may not read: for them it does not exist (an owner team
    reviews a private program's exceptions once it is a member, e.g. a viewer, of that program)."""
    if not may_read_window(user, exception.window):
        return MSG_NO_SUCH_EXCEPTION.format(pk=exception.pk)
    roles = group_names(user)
    if action == "edit" and FRAMEWORK_ENGINEERS not in roles:
        return MSG_ROLE.format(role=ROLE_LABELS[FRAMEWORK_ENGINEERS], doing="edit")
    if action == "revoke" and not approves_as_lead(user, exception):
        return program_policies.MSG_LEAD_ONLY.format(
            program=exception.window.program.slug, action="revoke exceptions"
        )
    if action in ("submit", "withdraw") and exception.requester_id != user.pk:
        return MSG_REQUESTER.format(action=action)
    if action in DECISIONS:
        # Separation of duties: whoever wrote any of it never decides it.
        if user.pk in author_ids:
            return MSG_SELF_APPROVAL
        team = exception.component.owner_team
        if not approves_as_lead(user, exception) and not (team and team in roles):
            return MSG_NOT_APPROVER.format(
                team=team, program=exception.window.program.slug, component=exception.component.key
            )
    return None


def approvals_enough(exception: FreezeException, standing: list[Approval]) -> bool:
    """The required number of standing approvals, one of them given by a lead of the window's program
    when that was required (both fixed at submission: freeze.services.approval_bar). Whether an
    approval was a lead's is recorded with it (`as_program_lead`, from approves_as_lead)."""
    if len(standing) < exception.required_approvals:
        return False
    return not exception.requires_lead_approval or any(a.as_program_lead for a in standing)


# --- break-glass overrides ------------------------------------------------------------------------------


def require_open_override(user: AnyUser) -> None:
    """An override lifts every program's freeze on a shared component, so it belongs to no one
    program: a lead of any program, or a platform admin, may open one."""
    program_policies.require_lead_anywhere(user, "open break-glass overrides")


def may_open_override(user: AnyUser) -> bool:
    return program_policies.leads_any_program(user)


def require_review_override(user: AnyUser, override: FreezeOverride) -> None:
    """Reviewed by a lead (of any program) or platform admin other than the one who opened it."""
    program_policies.require_lead_anywhere(user, "review break-glass overrides")
    if override.opened_by_id == user.pk:
        raise PermissionDenied(MSG_OWN)


def may_review_override(user: AnyUser, override: FreezeOverride) -> bool:
    return program_policies.leads_any_program(user) and override.opened_by_id != user.pk

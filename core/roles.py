"""Roles are Django groups (docs/architecture.md, "Roles and permissions"). Services ask these helpers;
nothing else hard-codes names."""

from __future__ import annotations

from typing import Protocol

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied

PROGRAM_LEADS = "program-leads"
FRAMEWORK_ENGINEERS = "framework-engineers"
METRIC_OWNERS = "metric-owners"
# May act on every program and manage memberships (issue 25); a program's own leads are its members.
PLATFORM_ADMINS = "platform-admins"

# The attribute of a user object that keeps its group names once fetched.
_GROUP_NAMES_CACHE = "_group_names_cache"

ROLE_GROUPS = (PROGRAM_LEADS, FRAMEWORK_ENGINEERS, METRIC_OWNERS)
ROLE_LABELS = {
    PROGRAM_LEADS: "program creator",  # the group program-leads: may create programs (issue 25)
    FRAMEWORK_ENGINEERS: "framework engineer",
    METRIC_OWNERS: "metric owner",
    PLATFORM_ADMINS: "platform admin",
}


def group_names(user: User | AnonymousUser) -> frozenset[str]:
    """The user's group names, fetched once per user object."""
    if not user.is_authenticated:
        return frozenset()
    cached: frozenset[str] | None = getattr(user, _GROUP_NAMES_CACHE, None)
    if cached is None:
        cached = frozenset(user.groups.values_list("name", flat=True))
        # Kept on the object, not in a table keyed by pk: a user loaded again sees its groups afresh.
        setattr(user, _GROUP_NAMES_CACHE, cached)
    return cached


def has_role(user: User | AnonymousUser, group: str) -> bool:
    return group in group_names(user)


def in_team(user: User | AnonymousUser, team: str) -> bool:
    """Owner teams (of workloads, metrics, components) are groups too."""
    return bool(team) and team in group_names(user)


def require_role(user: User | AnonymousUser, group: str, action: str) -> None:
    if not has_role(user, group):
        raise PermissionDenied(f"Only a {ROLE_LABELS.get(group, group)} may {action}.")


class _HasUser(Protocol):
    user: User | AnonymousUser


def acting_user(request: _HasUser) -> User:
    """The signed-in user a page or API view acts for. Pages need a login (the middleware) and every
    write an authenticated caller (the API's write rules, the admin's staff check), so an anonymous
    user here means a view lost its guard: it is refused (403), never handed to a service."""
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied("Sign in first.")
    return user

"""Roles are Django groups (DESIGN.md §2). Services ask these helpers; nothing else hard-codes names."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied

PROGRAM_LEADS = "program-leads"
FRAMEWORK_ENGINEERS = "framework-engineers"
METRIC_OWNERS = "metric-owners"

ROLE_GROUPS = (PROGRAM_LEADS, FRAMEWORK_ENGINEERS, METRIC_OWNERS)
ROLE_LABELS = {
    PROGRAM_LEADS: "program lead",
    FRAMEWORK_ENGINEERS: "framework engineer",
    METRIC_OWNERS: "metric owner",
}


def group_names(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """The user's group names, fetched once per user object."""
    if not user.is_authenticated:
        return frozenset()
    cached = getattr(user, "_group_names_cache", None)
    if cached is None:
        cached = frozenset(user.groups.values_list("name", flat=True))
        user._group_names_cache = cached
    return cached


def has_role(user: AbstractBaseUser | AnonymousUser, group: str) -> bool:
    return group in group_names(user)


def in_team(user: AbstractBaseUser | AnonymousUser, team: str) -> bool:
    """Owner teams (of workloads, metrics, components) are groups too."""
    return bool(team) and team in group_names(user)


def require_role(user: AbstractBaseUser | AnonymousUser, group: str, action: str) -> None:
    if not has_role(user, group):
        raise PermissionDenied(f"Only a {ROLE_LABELS.get(group, group)} may {action}.")

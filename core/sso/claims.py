"""What a provider's claims mean here. Pure: no Django, so settings can parse the mapping with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# django.contrib.auth's limits: Group.name and User.username are 150 characters.
NAME_MAX_LENGTH = 150


def parse_role_groups(text: str) -> dict[str, tuple[str, ...]]:
    """`OIDC_ROLE_GROUPS`: `role=provider-group[;provider-group…]`, pairs separated by commas, e.g.
    `platform-admins=rt-admins,program-leads=rt-leads;rt-managers`. Roles are named by their group
    (core.roles); a wrong shape raises ValueError naming the pair (checked again at start-up)."""
    mapping: dict[str, tuple[str, ...]] = {}
    for pair in filter(None, (part.strip() for part in text.split(","))):
        role, sep, groups = pair.partition("=")
        names = tuple(name.strip() for name in groups.split(";") if name.strip())
        if not sep or not role.strip() or not names:
            raise ValueError(f"OIDC_ROLE_GROUPS: {pair!r} is not role=provider-group[;provider-group…]")
        if role.strip() in mapping:
            raise ValueError(f"OIDC_ROLE_GROUPS names {role.strip()!r} twice")
        mapping[role.strip()] = names
    return mapping


def username_from(claims: Mapping[str, Any], claim: str) -> str:
    """The configured claim (e.g. preferred_username), else the email address; "" when neither is a
    non-empty string."""
    for value in (claims.get(claim), claims.get("email")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def provider_groups(claims: Mapping[str, Any], claim: str) -> frozenset[str]:
    """The groups the provider says the user is in. A missing claim means none: Keycloak leaves the
    claim out for a user in no group, and a role must go when its group does. Keycloak's full group
    paths ("/platform/sre") lose the leading slash; names longer than a Django group's are ignored."""
    value = claims.get(claim)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        return frozenset()
    names = (item.strip().lstrip("/") for item in value if isinstance(item, str))
    return frozenset(name for name in names if name and len(name) <= NAME_MAX_LENGTH)


def groups_wanted(groups: frozenset[str], role_groups: Mapping[str, tuple[str, ...]]) -> frozenset[str]:
    """The Django groups a user in `groups` (the provider's) belongs in: every provider group as a team
    of the same name (owner teams of components and metrics are groups by name), plus each role
    whose mapped provider groups include one of them."""
    roles = {role for role, names in role_groups.items() if groups.intersection(names)}
    return groups | roles

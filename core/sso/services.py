"""The writes of a single sign-on: the user it signs in, and their groups kept in step with the provider."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from core.audit import transition_record
from core.services.model_update import model_update
from core.sso import claims as claim_map
from core.sso.errors import AMBIGUOUS_USER, BAD_USERNAME, INACTIVE, LOCAL_ADMIN, NO_USERNAME, SignInRefused

GROUPS_SYNCED = "groups_synced"
PROFILE_FIELDS = ("email", "first_name", "last_name")


@dataclass(frozen=True)
class GroupsChange:
    added: tuple[str, ...]
    removed: tuple[str, ...]


def user_sign_in_sync(*, claims: Mapping[str, Any]) -> User:
    """The user the provider's `claims` describe, created on their first sign-in; their name and email
    and their groups set from the claims. Refuses (SignInRefused) what it cannot sign in."""
    try:
        return _sign_in_sync(claims)
    except IntegrityError:
        # Two first sign-ins of one new person at once (two tabs), or of two people in one new group:
        # the other made the account or the group first. Its transaction is over; this one finds them.
        return _sign_in_sync(claims)


def _sign_in_sync(claims: Mapping[str, Any]) -> User:
    username = claim_map.username_from(claims, settings.OIDC_USERNAME_CLAIM)
    if not username:
        raise SignInRefused(NO_USERNAME)
    try:
        UnicodeUsernameValidator()(username)
        if len(username) > claim_map.NAME_MAX_LENGTH:
            raise ValidationError("too long")
    except ValidationError:
        raise SignInRefused(f"{BAD_USERNAME}: {username!r}.") from None
    profile = _profile(claims)
    with transaction.atomic():
        # By username, ignoring case: providers are not consistent about it (Entra's UPNs), and two
        # accounts told apart only by case are refused rather than one of them picked.
        matches = list(User.objects.select_for_update().filter(username__iexact=username)[:2])
        if len(matches) > 1:
            raise SignInRefused(AMBIGUOUS_USER)
        if matches:
            user = matches[0]
            if user.is_superuser:
                raise SignInRefused(LOCAL_ADMIN)
            if not user.is_active:
                raise SignInRefused(INACTIVE)
            model_update(instance=user, fields=PROFILE_FIELDS, data=profile)
        else:
            # No password: this account signs in through the provider only.
            user = User.objects.create_user(username=username, **profile)
        user_groups_sync(
            user=user,
            groups=claim_map.groups_wanted(
                claim_map.provider_groups(claims, settings.OIDC_GROUPS_CLAIM), settings.OIDC_ROLE_GROUPS
            ),
            keep=frozenset(settings.OIDC_LOCAL_GROUPS),
            reason=f"Signed in through {settings.OIDC_PROVIDER_NAME}.",
        )
    return user


def user_groups_sync(
    *, user: User, groups: frozenset[str], keep: frozenset[str], reason: str
) -> GroupsChange:
    """Make the user's groups exactly `groups`, except those in `keep` (local-only groups, set in the
    admin), which are neither added nor removed. Groups that do not exist yet are created. A change
    writes one audit row on the user (core.Transition) naming what was added and removed."""
    with transaction.atomic():
        current = set(user.groups.values_list("name", flat=True))
        target = (set(groups) - keep) | (current & keep)
        added, removed = sorted(target - current), sorted(current - target)
        if added:
            user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in added))
        if removed:
            user.groups.remove(*Group.objects.filter(name__in=removed))
        if added or removed:
            transition_record(
                subject=user, action=GROUPS_SYNCED, reason=reason, data={"added": added, "removed": removed}
            )
    return GroupsChange(added=tuple(added), removed=tuple(removed))


def _profile(claims: Mapping[str, Any]) -> dict[str, str]:
    """Name and email from the standard claims, each only when it is a string that fits its field."""
    limits = {"email": ("email", 254), "first_name": ("given_name", 150), "last_name": ("family_name", 150)}
    profile = {}
    for field, (claim, limit) in limits.items():
        value = claims.get(claim)
        if isinstance(value, str) and len(value.strip()) <= limit:
            profile[field] = value.strip()
    return profile

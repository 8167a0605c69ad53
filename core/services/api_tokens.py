"""API tokens: making one (its secret shown once), revoking one, and revoking all of a user's at once.

A secret is `rt_` and 32 random bytes from `secrets` (256 bits, URL-safe base64); only its SHA-256 is
stored. A plain, fast hash is enough here and a slow one (PBKDF2, argon2) would buy nothing: slow hashes
protect *guessable* secrets such as passwords against guessing, and nobody guesses 256 random bits. The
fast hash is also what lets each request find its token by one lookup in a unique index, where a salted
slow hash would need a scan or a second key plus a costly check on every request.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.models import ApiToken

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SECRET_PREFIX = "rt_"
SCOPES = tuple(ApiToken.Scope.values)
NAME_MAX_LENGTH = ApiToken._meta.get_field("name").max_length or 100

MSG_NAME = "Give the token a name, at most {limit} characters, to tell it apart later."
MSG_SCOPES = "Choose one or more scopes of: {scopes}."
MSG_DAYS = "The token lives 1 to {limit} days."
MSG_NOT_YOURS = "This token belongs to someone else."
MSG_REVOKED_ALREADY = "This token is revoked already."
MSG_INACTIVE = "An inactive account cannot hold API tokens."


def token_digest(secret: str) -> str:
    """What a token is stored and looked up by. See the module docstring for why SHA-256 suffices."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    """A token just made, with the secret that exists nowhere else: show it once, then forget it."""

    token: ApiToken
    secret: str


def _checked_scopes(scopes: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(scopes))  # once each, in the order given
    if not chosen or any(scope not in SCOPES for scope in chosen):
        raise ApplicationError(MSG_SCOPES.format(scopes=", ".join(SCOPES)), status=400, field="scopes")
    return chosen


def _checked_days(days: int | None) -> int:
    limit = settings.API_TOKEN_MAX_DAYS
    if days is None:
        return int(settings.API_TOKEN_DAYS)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= limit:
        raise ApplicationError(MSG_DAYS.format(limit=limit), status=400, field="expires_in_days")
    return days


def api_token_create(
    *, actor: User, name: str, scopes: Iterable[str], expires_in_days: int | None = None
) -> IssuedToken:
    """A new token of the actor's own (nobody makes tokens for someone else), with an audit row."""
    if not actor.is_active:
        raise PermissionDenied(MSG_INACTIVE)
    name = (name or "").strip()
    if not name or len(name) > NAME_MAX_LENGTH:
        raise ApplicationError(MSG_NAME.format(limit=NAME_MAX_LENGTH), status=400, field="name")
    chosen = _checked_scopes(scopes)
    days = _checked_days(expires_in_days)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=actor,
            name=name,
            prefix=secret[:8],
            digest=token_digest(secret),
            scopes=chosen,
            created_at=now,
            expires_at=now + timedelta(days=days),
        )
        transition_record(
            subject=token,
            action="token_create",
            actor=actor,
            to_state="active",
            data={"name": name, "scopes": chosen, "expires_at": token.expires_at.isoformat()},
        )
    return IssuedToken(token=token, secret=secret)


def api_token_revoke(*, actor: User, token: ApiToken, reason: str = "") -> ApiToken:
    """Revoke one token: its owner, or a superuser (the admin action). Revoking twice is a 409."""
    if token.user_id != actor.pk and not actor.is_superuser:
        raise PermissionDenied(MSG_NOT_YOURS)
    with transaction.atomic():
        before = token.status
        now = timezone.now()
        # Conditional, so two revocations at once cannot both record one.
        if not ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now):
            raise ApplicationError(MSG_REVOKED_ALREADY, extra={"status": "revoked"})
        token.revoked_at = now
        transition_record(
            subject=token,
            action="token_revoke",
            actor=actor,
            from_state=before,
            to_state="revoked",
            reason=reason,
        )
    return token


def api_tokens_revoke_all(*, user: User, reason: str, actor: User | None = None) -> int:
    """Revoke every live token of `user` at once (password changed, account closed); how many."""
    now = timezone.now()
    with transaction.atomic():
        live = list(
            ApiToken.objects.select_for_update().filter(
                user=user, revoked_at__isnull=True, expires_at__gt=now
            )
        )
        ApiToken.objects.filter(pk__in=[token.pk for token in live]).update(revoked_at=now)
        for token in live:
            transition_record(
                subject=token,
                action="token_revoke",
                actor=actor,
                from_state="active",
                to_state="revoked",
                reason=reason,
            )
    return len(live)


def api_tokens_purge(*, now: datetime | None = None) -> int:
    """Delete the tokens that ended (expired, or revoked) more than API_TOKEN_KEEP_DAYS ago; how many.
    Until then the tokens page and API still list an ended token, so its owner can see what stopped
    working and why; its audit rows (made, revoked) stay after it is gone. Run daily by beat."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.API_TOKEN_KEEP_DAYS)
    ended = ApiToken.objects.filter(Q(expires_at__lt=cutoff) | Q(revoked_at__lt=cutoff))
    deleted, _ = ended.delete()
    return deleted

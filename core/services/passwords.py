"""Passwords: a reset by email link sets a new one, and any new password ends the user's API tokens.

`password_reset_confirm` is the one write of the reset flow (Django's PasswordResetView and friends
do the rest, core/pages/password_reset.py). `TokensRevokedOnPasswordChange` is listed among
AUTH_PASSWORD_VALIDATORS for its `password_changed` hook, which Django calls from `User.save()`
whenever a password was set — by this reset, the admin, `changepassword` or `set_password` in a
shell — and not when a sign-in merely upgrades the stored hash. A password written by raw SQL is
not seen; deactivating the account is (the token lookup checks `is_active` on every request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import PermissionDenied
from django.db import transaction

from core.audit import transition_record
from core.notifications import notification_send
from core.services.api_tokens import api_tokens_revoke_all

if TYPE_CHECKING:
    from django.contrib.auth.models import User

MSG_LINK_INVALID = "This password reset link is invalid or was used already; ask for a new one."
REASON_PASSWORD_CHANGED = "password changed"


def password_reset_confirm(*, user: User, reset_token: str, password: str) -> User:
    """Set a new password for the holder of a valid reset link (the link is the permission), with an
    audit row; the user's API tokens are revoked by the hook below, in the same transaction, and the
    user is told by email once it commits."""
    if not default_token_generator.check_token(user, reset_token):
        raise PermissionDenied(MSG_LINK_INVALID)
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        transition_record(subject=user, action="password_reset", actor=user, reason="reset by email link")
        notification_send(
            event="account.password_reset",
            subject="Your Rebuild Tracker password was changed",
            body=(
                "Your password was just reset through a link sent to this address, and every API "
                "token of yours was revoked. If this was not you, tell an administrator."
            ),
            link="/account/tokens/",
            users=[user],
            # A security notice: by email whatever the person chose for this kind (in-app, digest).
            recipients=[user.email],
        )
    return user


class TokensRevokedOnPasswordChange:
    """Validates nothing; revokes every API token of a user whose password was just changed."""

    def validate(self, password: str, user: Any = None) -> None:
        return None

    def password_changed(self, password: str, user: Any = None) -> None:
        if user is not None and user.pk is not None:
            api_tokens_revoke_all(user=user, reason=REASON_PASSWORD_CHANGED)

    def get_help_text(self) -> str:
        return "Changing your password revokes every API token you hold."

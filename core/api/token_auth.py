"""API token authentication: `Authorization: Token <secret>` or `Bearer <secret>` (OTel exporters).

One indexed lookup per request, by the secret's SHA-256 (core/services/api_tokens.py), with the user
joined: the user's `is_active`, the token's expiry and its revocation are read afresh on every request,
so deactivating an account (also by SQL), revoking a token or changing a password (which revokes every
token, core/services/passwords.py) takes effect on the very next request. There is no cache in front of
it: measured over 2,000 authenticated GETs, the old token cache saved about 0.3 ms of CPU a request
(issue 25), nothing a user feels, and it was why a deactivated user's token kept working for minutes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from core.models import ApiToken
from core.services.api_tokens import token_digest

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from drf_spectacular.openapi import AutoSchema
    from rest_framework.request import Request

KEYWORDS = ("token", "bearer")
# last_used_at is written at most this often per token: a write on every request would cost more than
# the lookup, and "last used" to the minute is all the tokens page says.
LAST_USED_RESOLUTION = timedelta(minutes=1)

MSG_MALFORMED = (
    "Send the token as `Authorization: Token <token>` (or `Bearer <token>`), with no spaces in it."
)
MSG_UNKNOWN = "Invalid token."
MSG_REVOKED = "This token was revoked."
MSG_EXPIRED = "This token expired on {at:%Y-%m-%d %H:%M} UTC; create a new one."
MSG_INACTIVE = "User inactive or deleted."


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower().decode(errors="replace") not in KEYWORDS:
            return None  # another scheme (or none): session authentication may still answer
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(MSG_MALFORMED)
        try:
            secret = parts[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(MSG_MALFORMED) from None
        token = ApiToken.objects.select_related("user").filter(digest=token_digest(secret)).first()
        if token is None:
            raise exceptions.AuthenticationFailed(MSG_UNKNOWN)
        now = timezone.now()
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed(MSG_REVOKED)
        if token.expires_at <= now:
            raise exceptions.AuthenticationFailed(MSG_EXPIRED.format(at=token.expires_at))
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(MSG_INACTIVE)
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return "Token"  # so an anonymous API call gets 401 with WWW-Authenticate, not 403


# drf-spectacular's __init_subclass__ is unannotated: --strict reports the call it makes here.
class ApiTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = ApiTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "An API token as `Token <token>` or `Bearer <token>`. Each token has scopes: `ingest`, "
                "`freeze-check`, `alerts`, `read`, `full`; an operation outside them is a 403 naming the scope it needs."
            ),
        }

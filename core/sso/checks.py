"""Single sign-on settings that would fail only at someone's sign-in, reported at start-up instead
(`manage.py check`, migrate and runserver run Django's system checks). Settings parse the mapping's shape
(config/settings/base.py); the role names need core.roles, which settings cannot import."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from core.roles import ROLE_LABELS
from core.sso.provider import sso_enabled


@register()
def sso_settings_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    unknown = sorted(set(settings.OIDC_ROLE_GROUPS) - set(ROLE_LABELS))
    if unknown:
        found.append(
            Error(
                f"OIDC_ROLE_GROUPS names no role: {', '.join(unknown)}",
                hint=f"Roles are {', '.join(sorted(ROLE_LABELS))}.",
                id="sso.E001",
            )
        )
    if settings.OIDC_RP_CLIENT_ID and not sso_enabled():
        found.append(
            Error(
                "OIDC_RP_CLIENT_ID is set but not the provider",
                hint="Set OIDC_OP_DISCOVERY_URL (or the OIDC_OP_*_ENDPOINT settings).",
                id="sso.E002",
            )
        )
    if sso_enabled() and not settings.OIDC_RP_CLIENT_SECRET:
        found.append(Error("OIDC_RP_CLIENT_SECRET is not set", id="sso.E003"))
    explicit = [
        settings.OIDC_OP_TOKEN_ENDPOINT,
        settings.OIDC_OP_USER_ENDPOINT,
        settings.OIDC_OP_JWKS_ENDPOINT,
    ]
    if settings.OIDC_OP_AUTHORIZATION_ENDPOINT and not all(explicit):
        found.append(
            Error(
                "OIDC_OP_AUTHORIZATION_ENDPOINT is set without all of OIDC_OP_TOKEN_ENDPOINT, "
                "OIDC_OP_USER_ENDPOINT and OIDC_OP_JWKS_ENDPOINT",
                hint="Or set OIDC_OP_DISCOVERY_URL alone.",
                id="sso.E004",
            )
        )
    return found

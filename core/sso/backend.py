"""The authentication backends of sign-in (settings AUTHENTICATION_BACKENDS).

`OidcBackend` does the code exchange of the authorization-code flow (mozilla-django-oidc), with two
checks that library leaves out, and hands the claims to core.sso.services. `LocalLoginSwitch` refuses
every password sign-in when LOCAL_LOGIN_ENABLED is off.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from core.sso.errors import LOCAL_LOGIN_OFF
from core.sso.provider import endpoints, sso_enabled
from core.sso.services import user_sign_in_sync


class OidcBackend(OIDCAuthenticationBackend):  # type: ignore[misc]  # mozilla-django-oidc has no type information
    """Signs in the user of an OpenID Connect callback: only the callback view passes `nonce` and
    `code_verifier`, so a password sign-in's credentials do not fit this signature and Django skips it."""

    def authenticate(
        self, request: HttpRequest | None, nonce: str | None = None, code_verifier: str | None = None
    ) -> User | None:
        if request is None or not sso_enabled():
            return None
        # Resolved here, at a sign-in, rather than when Django builds the backend, which it also does to
        # load a signed-in user on each of their requests: those must not wait for the provider.
        found = endpoints()
        self.issuer = found.issuer
        self.OIDC_OP_TOKEN_ENDPOINT = found.token
        self.OIDC_OP_USER_ENDPOINT = found.userinfo
        self.OIDC_OP_JWKS_ENDPOINT = found.jwks
        user: User | None = super().authenticate(request, nonce=nonce, code_verifier=code_verifier)
        return user

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        """The library checks the signature, expiry and nonce but not who issued the token or for whom
        (it turns PyJWT's audience check off): a token another client of the same provider obtained
        must not sign anyone in here."""
        payload: dict[str, Any] = super().verify_token(token, **kwargs)
        if self.issuer and payload.get("iss") != self.issuer:
            raise SuspiciousOperation("The ID token was issued by another provider.")
        audience = payload.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience
        if not isinstance(audiences, list) or settings.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("The ID token was issued for another client.")
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The ID token's claims with the userinfo endpoint's over them: Entra ID sends `groups` in the ID
        token only, Keycloak and Okta in both."""
        userinfo: dict[str, Any] = super().get_userinfo(access_token, id_token, payload)
        # OpenID Connect Core 5.3.2: userinfo about another subject must not be used.
        if userinfo.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("The userinfo answer is about another user than the ID token.")
        return {**payload, **userinfo}

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> User:
        return user_sign_in_sync(claims=self.get_userinfo(access_token, id_token, payload))


class LocalLoginSwitch:
    """Listed before the password backend: with LOCAL_LOGIN_ENABLED off, every password sign-in (the
    login page, the admin's, the API's token endpoint) stops here. PermissionDenied ends
    django.contrib.auth.authenticate() at once and counts as a failed sign-in, so the lockout stays."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if password is not None and not settings.LOCAL_LOGIN_ENABLED:
            raise PermissionDenied(LOCAL_LOGIN_OFF)

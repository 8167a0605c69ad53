"""The sign-in screens: the login page (password and/or SSO), the start and the callback of the
authorization-code flow, and the page any failed single sign-on lands on — a clear page with a way to try
again, never a 500 or Django's bare 400."""

from __future__ import annotations

import logging
import time
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from core.sso import errors
from core.sso.provider import ProviderUnavailable, endpoints, sso_enabled

logger = logging.getLogger(__name__)

# What a provider (or the network to it) can raise during the code exchange: the token or userinfo
# request failing, a token that does not verify, an answer that is not the JSON it should be.
PROVIDER_FAILURES = (
    requests.RequestException,
    jwt.PyJWTError,
    SuspiciousOperation,
    ProviderUnavailable,
    ValueError,
    KeyError,
)
# Room for a provider's error_description on the failure page, no more.
DESCRIPTION_MAX = 300


def sign_in_failed(request: HttpRequest, reason: str, status: int, detail: str = "") -> HttpResponse:
    return render(
        request,
        "core/sso_failed.html",
        {"reason": reason, "detail": detail[:DESCRIPTION_MAX], "sso_enabled": sso_enabled()},
        status=status,
    )


class LoginPage(LoginView):
    """The password form unless LOCAL_LOGIN_ENABLED is off, and "Sign in with <provider>" when SSO is
    configured. With password sign-in off, a posted password is refused before it is checked."""

    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context.update(
            sso_enabled=sso_enabled(),
            sso_provider_name=settings.OIDC_PROVIDER_NAME,
            local_login_enabled=settings.LOCAL_LOGIN_ENABLED,
        )
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.LOCAL_LOGIN_ENABLED:
            return self.render_to_response(self.get_context_data(refused=errors.LOCAL_LOGIN_OFF), status=403)
        response: HttpResponse = super().post(request, *args, **kwargs)
        return response


class SsoStart(OIDCAuthenticationRequestView):  # type: ignore[misc]  # mozilla-django-oidc has no type information
    """/oidc/authenticate/: sends the browser to the provider with a state, a nonce and a PKCE challenge,
    remembered in the session for the callback."""

    def get(self, request: HttpRequest) -> HttpResponseBase:
        if not sso_enabled():
            return sign_in_failed(request, errors.SSO_OFF, 404)
        try:
            self.OIDC_OP_AUTH_ENDPOINT = endpoints().authorization
        except ProviderUnavailable as exc:
            logger.warning("single sign-on: %s", exc)
            return sign_in_failed(request, errors.PROVIDER_UNREACHABLE, 502)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        response: HttpResponseBase = super().get(request)
        return response


class SsoCallback(OIDCAuthenticationCallbackView):  # type: ignore[misc]  # mozilla-django-oidc has no type information
    """/oidc/callback/: where the provider sends the browser back. The state must be one this browser's
    session started, less than OIDC_STATE_MAX_AGE seconds ago; the library would answer a foreign state
    with SuspiciousOperation (a bare 400) and never expires one."""

    def get(self, request: HttpRequest) -> HttpResponseBase:
        if not sso_enabled():
            return sign_in_failed(request, errors.SSO_OFF, 404)
        states = request.session.get("oidc_states")
        states = states if isinstance(states, dict) else {}
        state = request.GET.get("state", "")
        entry = states.get(state)
        if request.GET.get("error"):
            # The provider's own refusal (access_denied when the person cancels, for one). The state is
            # forgotten, as a used one would be, so the answer cannot be replayed.
            if entry is not None:
                del states[state]
                request.session.modified = True
            description = request.GET.get("error_description", "")
            return sign_in_failed(
                request, f"{errors.PROVIDER_REFUSED}: {request.GET['error'][:80]}.", 403, description
            )
        if entry is None:
            return sign_in_failed(request, errors.STATE_UNKNOWN, 400)
        if not request.GET.get("code"):
            return sign_in_failed(request, errors.INCOMPLETE, 400)
        if time.time() - float(entry.get("added_on", 0)) > settings.OIDC_STATE_MAX_AGE:
            del states[state]
            request.session.modified = True
            return sign_in_failed(request, errors.STATE_EXPIRED, 400)
        try:
            response: HttpResponseBase = super().get(request)
        except errors.SignInRefused as exc:
            return sign_in_failed(request, str(exc), 403)
        except PROVIDER_FAILURES as exc:
            logger.warning("single sign-on failed: %s: %s", exc.__class__.__name__, exc)
            return sign_in_failed(request, errors.PROVIDER_ERROR, 502)
        return response

    def login_failure(self) -> HttpResponse:
        """The library's answer when no user came back (it redirects to a setting); here, the page."""
        return sign_in_failed(self.request, errors.PROVIDER_ERROR, 502)

"""Where the OpenID provider is: whether SSO is configured, and its endpoints.

mozilla-django-oidc wants each endpoint as a setting; providers publish them in a discovery document
(`…/.well-known/openid-configuration`). It is read at the first sign-in of each process and kept, not
at start-up: a provider out of reach must not stop the tracker (or a management command) from starting,
and password sign-in keeps working meanwhile.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import httpx
from django.conf import settings

from core.sso.errors import PROVIDER_UNREACHABLE


class ProviderUnavailable(Exception):
    """The discovery document could not be read or lacks an endpoint; the message says which."""


@dataclass(frozen=True)
class Endpoints:
    issuer: str  # "" when configured by endpoints without OIDC_OP_ISSUER: the issuer is then not checked
    authorization: str
    token: str
    userinfo: str
    jwks: str


REQUIRED = {
    "authorization": "authorization_endpoint",
    "token": "token_endpoint",
    "userinfo": "userinfo_endpoint",
    "jwks": "jwks_uri",
}

_discovered: dict[str, Endpoints] = {}
_lock = threading.Lock()


def sso_enabled() -> bool:
    """SSO is off unless a client id and the provider (its discovery URL or its endpoints) are set."""
    return bool(
        settings.OIDC_RP_CLIENT_ID
        and (settings.OIDC_OP_DISCOVERY_URL or settings.OIDC_OP_AUTHORIZATION_ENDPOINT)
    )


def endpoints() -> Endpoints:
    """The provider's endpoints: the explicit settings when OIDC_OP_AUTHORIZATION_ENDPOINT is set, else
    the discovery document, fetched once per process and URL."""
    if settings.OIDC_OP_AUTHORIZATION_ENDPOINT:
        return Endpoints(
            issuer=settings.OIDC_OP_ISSUER,
            authorization=settings.OIDC_OP_AUTHORIZATION_ENDPOINT,
            token=settings.OIDC_OP_TOKEN_ENDPOINT,
            userinfo=settings.OIDC_OP_USER_ENDPOINT,
            jwks=settings.OIDC_OP_JWKS_ENDPOINT,
        )
    url = settings.OIDC_OP_DISCOVERY_URL
    with _lock:
        if url not in _discovered:
            _discovered[url] = _discover(url)
        return _discovered[url]


def discovery_forget() -> None:
    """Read the discovery document again at the next sign-in (tests start providers on new ports)."""
    with _lock:
        _discovered.clear()


def _discover(url: str) -> Endpoints:
    try:
        response = httpx.get(url, timeout=settings.OIDC_TIMEOUT, follow_redirects=True)
        response.raise_for_status()
        document = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ProviderUnavailable(f"{PROVIDER_UNREACHABLE} ({url}: {exc.__class__.__name__})") from exc
    if not isinstance(document, dict):
        raise ProviderUnavailable(f"{PROVIDER_UNREACHABLE} ({url} is not a discovery document)")
    missing = [key for key in [*REQUIRED.values(), "issuer"] if not isinstance(document.get(key), str)]
    if missing:
        raise ProviderUnavailable(f"{PROVIDER_UNREACHABLE} ({url} lacks {', '.join(missing)})")
    return Endpoints(issuer=document["issuer"], **{field: document[key] for field, key in REQUIRED.items()})

"""Who the client is, for rate limits and the login lockout, and the token endpoint's throttle.

The client address is REMOTE_ADDR unless settings say how many trusted proxies stand in front of the app
(REST_FRAMEWORK["NUM_PROXIES"], from the NUM_PROXIES environment variable). Only then is X-Forwarded-For
read, and only the entry NUM_PROXIES places from its right end, the one the outermost trusted proxy appended:
anything left of it is the client's say.
Counts live in the default cache, which production requires to be shared (Redis), so every worker process
counts the same requests.
"""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework.throttling import AnonRateThrottle, BaseThrottle

_IDENT = BaseThrottle()


def client_ip(request: HttpRequest) -> str | None:
    """The client address as DRF's throttles see it; django-axes uses it too (AXES_CLIENT_IP_CALLABLE)."""
    # DRF's stub asks for its Request, but get_ident reads only the headers and META a Django request has
    # too, and django-axes passes a Django request.
    return _IDENT.get_ident(request) or None  # type: ignore[arg-type]


class TokenLoginThrottle(AnonRateThrottle):
    """Token requests per client address, counted before the password is looked at."""

    scope = "token"
    rate = "30/min"
